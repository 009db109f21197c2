"""The previous cycle: history_path, the lineage of older responses, and what is never read."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.context.history import (
    Lineage,
    PreviousCycle,
    find_previous,
    read_previous,
    summarize_response,
)
from nexusd.context.librarian import _order_key
from nexusd.protocol.render import read_response_meta

OURS = """---
protocol_version: 1
request_file: 2025-05-08T11_40_03_plan_request.md
request_sha256: abc
revision: 1
status: ok
cycle: 2
planner: offline
---

# Plan for cycle 2: thread-safe shelves

## Plan

1. **Add a per-shelf lock in `shelves.py`.**
   - Files: `kitchen/shelves.py`
2. **Write `test_concurrency.py`.**

```
1. not an action, inside a fence
```

## Executor Follow-up Checklist

- [x] Mark each action
- [ ] Write the cycle 3 request
"""

FOREIGN = """# Planner response for cycle 1

Some words.

1. Read the code
2. Change it
"""


def test_summarize_our_response() -> None:
    actions, checklist = summarize_response(OURS)
    assert actions == ("Add a per-shelf lock in shelves.py.", "Write test_concurrency.py.")
    assert checklist == ((True, "Mark each action"), (False, "Write the cycle 3 request"))


def test_summarize_a_response_without_plan_heading_uses_numbered_lines() -> None:
    actions, checklist = summarize_response(FOREIGN)
    assert actions == ("Read the code", "Change it")
    assert checklist == ()


def _folder(root: Path) -> Path:
    folder = root / ".scratchpad_logs"
    folder.mkdir()
    for stamp in ("2025-05-08T09_00_00", "2025-05-08T11_40_03", "2025-05-08T16_00_00"):
        (folder / f"{stamp}_plan_response.md").write_text(OURS.replace("cycle: 2", "cycle: 9"))
    return folder


def test_history_path_wins(repo: Path) -> None:
    folder = _folder(repo)
    (repo / "docs").mkdir()
    (repo / "docs" / "old.md").write_text(FOREIGN)
    path, source, note = find_previous(
        repo, folder / "2025-05-08T14_02_11_plan_request.md", "docs/old.md", _order_key
    )
    assert path == (repo / "docs" / "old.md").resolve()
    assert (source, note) == ("history_path", "")


def test_history_path_relative_to_the_request_folder(repo: Path) -> None:
    folder = _folder(repo)
    path, source, _ = find_previous(
        repo,
        folder / "2025-05-08T14_02_11_plan_request.md",
        "2025-05-08T09_00_00_plan_response.md",
        _order_key,
    )
    assert path is not None and path.name == "2025-05-08T09_00_00_plan_response.md"
    assert source == "history_path"


def _response(
    folder: Path, stamp: str, goal: str, *, status: str = "ok", cycle: int | None
) -> None:
    meta = f"request_sha256: abc\nrevision: 1\nstatus: {status}\ncycle: {cycle or 'null'}\n"
    title = f"Plan for cycle {cycle}: {goal}" if cycle else f"Plan: {goal}"
    (folder / f"{stamp}_plan_response.md").write_text(f"---\n{meta}---\n\n# {title}\n")


def _previous(repo: Path, history: str | None, lineage: Lineage) -> tuple[str | None, str, str]:
    path, source, note = find_previous(
        repo,
        repo / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md",
        history,
        _order_key,
        lineage=lineage,
        meta_reader=read_response_meta,
    )
    return (path.name if path else None), source, note


@pytest.mark.parametrize(
    ("history", "note_part"),
    [(None, ""), ("none", ""), ("gone.md", "does not exist"), ("../../etc/passwd", "refused")],
)
def test_without_history_path_a_related_goal_is_followed(
    repo: Path, history: str | None, note_part: str
) -> None:
    folder = _folder(repo)  # three cycle-9 responses about "thread-safe shelves"
    lineage = Lineage(goal="Make the overflow shelves thread-safe under contention")
    name, source, note = _previous(repo, history, lineage)
    # 16:00 is newer than the request (14:02) and its own response is never its history.
    assert name == "2025-05-08T11_40_03_plan_response.md"
    assert source.startswith("newest older response in the folder: a related goal")
    assert note_part in note
    assert folder.is_dir()


def test_an_error_response_or_an_unrelated_goal_is_never_the_previous_cycle(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    _response(
        folder, "2025-05-08T09_00_00", "Fix the crash in click.prompt on empty input", cycle=None
    )
    _response(folder, "2025-05-08T10_00_00", "Rename the courier module", cycle=None)
    _response(folder, "2025-05-08T11_00_00", "Request error", status="error", cycle=None)
    unrelated = Lineage(goal="Add a file-size option type")
    assert _previous(repo, None, unrelated)[0] is None
    # The newest related response is chosen, over newer unrelated and error ones.
    related_goal = Lineage(goal="Make click.prompt handle empty input without a crash")
    assert _previous(repo, None, related_goal)[0] == "2025-05-08T09_00_00_plan_response.md"
    # Even when the error response was for this very goal.
    _response(folder, "2025-05-08T12_00_00", related_goal.goal, status="error", cycle=None)
    assert _previous(repo, None, related_goal)[0] == "2025-05-08T09_00_00_plan_response.md"


def test_the_cycle_before_is_followed_whatever_its_goal(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    _response(folder, "2025-05-08T09_00_00", "Write the courier", cycle=2)
    _response(folder, "2025-05-08T10_00_00", "Write the courier", cycle=2, status="error")
    _response(folder, "2025-05-08T11_00_00", "Shelves", cycle=7)
    name, source, _ = _previous(repo, None, Lineage(cycle=3, goal="Make the shelves faster"))
    assert name == "2025-05-08T09_00_00_plan_response.md"
    assert "cycle 2" in source
    # A previous goal that names an older response's goal chains to it.
    lineage = Lineage(goal="Speed up", previous_goal="Deploy the courier")
    assert _previous(repo, None, lineage)[0] is None  # one shared word is not "clearly related"
    lineage = Lineage(goal="Speed up", previous_goal="Write the courier and its tests")
    assert _previous(repo, None, lineage)[0] == "2025-05-08T09_00_00_plan_response.md"


def test_history_path_is_honoured_even_without_any_relation(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    _response(folder, "2025-05-08T09_00_00", "Something else", cycle=None)
    name, source, _ = _previous(
        repo, "2025-05-08T09_00_00_plan_response.md", Lineage(goal="Add a flag")
    )
    assert (name, source) == ("2025-05-08T09_00_00_plan_response.md", "history_path")


def test_no_previous_response(repo: Path) -> None:
    folder = _folder(repo)
    assert (
        find_previous(repo, folder / "2025-05-08T08_00_00_plan_request.md", None, _order_key)[0]
        is None
    )


def test_read_previous_uses_front_matter(repo: Path) -> None:
    folder = _folder(repo)
    (folder / "x_plan_response.md").write_text(OURS)
    prev = read_previous(repo, folder / "x_plan_response.md", "history_path", read_response_meta)
    assert prev.path == ".scratchpad_logs/x_plan_response.md"
    assert (prev.cycle, prev.status, prev.planner) == (2, "ok", "offline")
    assert len(prev.actions) == 2


def test_read_previous_of_a_foreign_file(repo: Path) -> None:
    (repo / "old.md").write_text(FOREIGN)
    prev = read_previous(repo, repo / "old.md", "history_path", read_response_meta)
    assert (prev.cycle, prev.status, prev.planner) == (None, None, None)
    assert prev.actions == ("Read the code", "Change it")


def _in_thread(run: Callable[[], object], unblock: list[Path]) -> object:
    """`run()` in a thread; a FIFO open that blocks is released (and the test fails)."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(run()), daemon=True)
    thread.start()
    thread.join(60)
    blocked = thread.is_alive()
    if blocked:
        for fifo in unblock:  # a read-write open never blocks and ends the reader's wait
            os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
        thread.join(60)
    assert not blocked, "reading the older responses blocked on a FIFO"
    return result[0]


def test_fifos_named_like_older_responses_are_skipped_not_waited_on(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    _response(folder, "2024-12-30T00_00_00", "Make the shelves thread-safe", cycle=None)
    fifo = repo / "pipe"
    os.mkfifo(fifo)
    os.mkfifo(folder / "2025-01-02T00_00_00_plan_response.md")
    (folder / "2024-12-31T00_00_00_plan_response.md").symlink_to(fifo)
    lineage = Lineage(goal="Make the overflow shelves thread-safe under contention")

    found = _in_thread(
        lambda: _previous(repo, None, lineage),
        [fifo, folder / "2025-01-02T00_00_00_plan_response.md"],
    )

    assert isinstance(found, tuple) and found[0] == "2024-12-30T00_00_00_plan_response.md"


def test_an_older_response_linked_outside_the_repository_is_never_read(
    repo: Path, tmp_path: Path
) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\nstatus: ok\n---\n\n# Plan: Make the shelves thread-safe\n")
    (folder / "2025-01-01T00_00_00_plan_response.md").symlink_to(outside)
    lineage = Lineage(goal="Make the overflow shelves thread-safe under contention")

    assert _previous(repo, None, lineage)[0] is None


def test_read_previous_of_a_path_outside_the_repository_is_a_note_not_a_crash(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text(OURS)
    link = repo / "old_plan_response.md"
    link.symlink_to(outside)

    prev = read_previous(repo, link, "history_path", read_response_meta, "kept")

    assert prev.actions == () and prev.cycle is None
    assert prev.note == "kept; resolves outside the repository (not read)"


def test_read_previous_of_a_fifo_is_a_note(repo: Path) -> None:
    fifo = repo / "old_plan_response.md"
    os.mkfifo(fifo)

    prev = _in_thread(lambda: read_previous(repo, fifo, "history_path", read_response_meta), [fifo])

    assert isinstance(prev, PreviousCycle)
    assert (prev.path, prev.note) == ("old_plan_response.md", "not a regular file (not read)")


@pytest.mark.parametrize(
    "odd",
    [
        "0001-01-01T00:00:00+01:00_plan_response.md",
        "9999-12-31T23:59:59-2359_plan_response.md",
    ],
)
def test_a_timestamp_out_of_range_in_the_folder_breaks_no_other_request(
    repo: Path, odd: str
) -> None:
    folder = _folder(repo)  # three cycle-9 responses about "thread-safe shelves"
    (folder / odd).write_text(OURS.replace("cycle: 2", "cycle: 9"))
    lineage = Lineage(goal="Make the overflow shelves thread-safe under contention")

    name, source, _ = _previous(repo, None, lineage)

    assert name == "2025-05-08T11_40_03_plan_response.md"
    assert source.startswith("newest older response in the folder")
    # The odd name itself, as a request, is ordered like a name without a timestamp: after
    # every timestamped one.
    request = folder / odd.replace("_plan_response.md", "_plan_request.md")
    path = find_previous(repo, request, None, _order_key, lineage=lineage)[0]
    assert path is not None and path.name == "2025-05-08T16_00_00_plan_response.md"


def test_a_history_path_to_a_file_outside_the_repository_is_reported_as_outside(
    repo: Path,
) -> None:
    folder = _folder(repo)
    (repo.parent / "secret.txt").write_text("not yours\n")

    path, _, note = find_previous(
        repo, folder / "2025-05-08T14_02_11_plan_request.md", "../secret.txt", _order_key
    )

    assert path is None
    assert "resolves outside the repository" in note and "does not exist" not in note
