"""A real daemon with everything on: memory cited in plans, checks, checkpoints, daily notes,
and git hooks drained from the inbox."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from daemon.helpers import nexusd, response_for, wait_answered, wait_until, write_config
from tests.conftest import git

pytestmark = pytest.mark.slow

MEMORY = """# Memory

## Lessons

- Never hold two shelf locks at once: the courier thread takes them in the other order
  and the placement deadlocks under contention.
"""

CONFIG = """\
memory:
  enabled: true
sandbox:
  backend: subprocess
checks:
  - name: smoke
    run: python3 -c "import sys; print('checking'); sys.exit('shelf overflow lost an order')"
    timeout: 30
  - name: on-commit
    run: python3 -c "print('the commit is checked')"
    when: [commit]
    timeout: 30
"""

REQUEST = """---
cycle: 2
goal: Make order placement thread-safe across the hot and overflow shelves
blockers:
  - placement deadlocks when two shelf locks are held
---
"""


@pytest.fixture
def full(served: Path, start_daemon: Callable[..., Path]) -> Path:
    """A served repository with memory on, one failing check, and the daemon running."""
    (served / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    write_config(served, CONFIG)
    git(served, "add", "-A")
    git(served, "commit", "-q", "-m", "memory and config")
    return start_daemon(served, "--timeout", "120")


def test_plan_cites_memory_runs_checks_checkpoints_and_notes_the_day(full: Path) -> None:
    request = full / ".scratchpad_logs" / "2026-01-02T10_00_00_plan_request.md"
    request.write_text(REQUEST, encoding="utf-8")
    meta = wait_answered(request, timeout=120)
    text = response_for(request).read_text(encoding="utf-8")

    # Memory: the lesson is cited as path:line, first under the blocker solutions.
    assert "## Evidence from Memory" in text
    assert "`MEMORY.md:" in text
    blockers = text.split("## Blocker Solutions", 1)[1]
    assert blockers.index("MEMORY.md:") < blockers.index("\n## ")
    # Checks ran before planning on the checkpoint's snapshot, and the failure was reflected on.
    assert meta["checks"] == {"smoke": "failed"}
    assert "## Checks" in text and "shelf overflow lost an order" in text
    assert any("NOT isolated" in w for w in meta["warnings"])
    # The checkpoint is named with its restore command and carries the results as a note.
    checkpoint = meta["checkpoint"]
    assert meta["restore"] == f"nexusd checkpoint restore {checkpoint}"
    listed = json.loads(nexusd(full, "checkpoint", "list", "--json").stdout)
    row = next(r for r in listed if r["id"] == checkpoint)
    assert (row["reason"], row["checks"]) == ("request", "failed")
    # Today's daily note names the response.
    daily = full / "memory" / "daily" / f"{datetime.now().date().isoformat()}.md"
    wait_until(daily.exists, timeout=10, what="the daily note")
    assert response_for(request).name in daily.read_text(encoding="utf-8")


def test_memory_search_goes_through_the_daemon_and_sees_new_notes(full: Path) -> None:
    nexusd(
        full,
        "memory",
        "add",
        "Retry flaky courier pings with jittered backoff",
        "--category",
        "lessons",
    )

    def found() -> list[dict[str, object]]:
        out = nexusd(full, "memory", "search", "jittered backoff", "--json").stdout
        hits = json.loads(out)["hits"]
        return [h for h in hits if "jittered" in str(h["snippet"])]

    hits = wait_until(found, timeout=60, what="the new note in search results")
    assert str(hits[0]["citation"]).startswith("MEMORY.md:")


def test_commit_hook_checkpoints_and_writes_the_daily_note(full: Path) -> None:
    nexusd(full, "hooks", "install")
    (full / "kitchen.py").write_text("SHELVES = 3\n", encoding="utf-8")
    git(full, "add", "kitchen.py")
    git(full, "commit", "-q", "-m", "add kitchen")
    head = git(full, "rev-parse", "HEAD").strip()

    def commit_checkpoint() -> list[dict[str, object]]:
        rows = json.loads(nexusd(full, "checkpoint", "list", "--json").stdout)
        return [r for r in rows if r["reason"] == "commit"]

    wait_until(commit_checkpoint, timeout=60, what="a checkpoint for the commit")
    daily = full / "memory" / "daily" / f"{datetime.now().date().isoformat()}.md"
    wait_until(
        lambda: daily.exists() and head[:12] in daily.read_text(encoding="utf-8"),
        timeout=60,
        what="the commit in the daily note",
    )
    # The `when: commit` checks ran on the commit's checkpoint: the line says how they ended.
    line = next(x for x in daily.read_text(encoding="utf-8").splitlines() if head[:12] in x)
    checkpoint = commit_checkpoint()[0]
    assert f"checkpoint `{checkpoint['id']}`" in line
    assert "checks: on-commit: passed" in line, line  # the request-only check did not run
    assert checkpoint["checks"] == "passed", checkpoint  # the results went onto the checkpoint
