from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.planner.history import find_previous, read_previous, summarize_response
from nexusd.planner.librarian import _order_key
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


@pytest.mark.parametrize(
    ("history", "note_part"),
    [(None, ""), ("none", ""), ("gone.md", "does not exist"), ("../../etc/passwd", "refused")],
)
def test_falls_back_to_newest_older_response(
    repo: Path, history: str | None, note_part: str
) -> None:
    folder = _folder(repo)
    path, source, note = find_previous(
        repo, folder / "2025-05-08T14_02_11_plan_request.md", history, _order_key
    )
    # 16:00 is newer than the request (14:02) and its own response is never its history.
    assert path is not None and path.name == "2025-05-08T11_40_03_plan_response.md"
    assert source == "newest older response in the folder"
    assert note_part in note


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
