"""The daily-note line of a request answered just before a `kill -9` is written at restart."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from daemon.helpers import (
    daemon_pid,
    front_matter,
    pid_gone,
    request_text,
    response_for,
    wait_until,
)
from nexusd.daemon.journal import AnswerJournal
from nexusd.daemon.worker import OutcomeLike
from nexusd.memory.daily import daily_path
from nexusd.memory.safewrite import locked
from nexusd.paths import find_repo


def _daily_text(repo: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in (repo / "memory" / "daily").glob("*.md"))


def test_line_lost_to_a_kill_between_answer_and_note_is_written_at_restart(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    layout = find_repo(served)
    request = served / ".scratchpad_logs" / "2025-04-20T08_11_37_plan_request.md"
    # Holding the daily note's writer lock stops the daemon between the two writes.
    with locked(layout.nexus_dir / "locks", daily_path(layout, datetime.now())):
        start_daemon(served)
        pid = daemon_pid(served)
        assert pid is not None
        request.write_text(request_text("Explain the README"), encoding="utf-8")
        meta = wait_until(lambda: front_matter(response_for(request)), what="the answer")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: pid_gone(pid), what="the killed daemon to exit")
    assert response_for(request).name not in _daily_text(served)
    start_daemon(served)
    wait_until(lambda: response_for(request).name in _daily_text(served), what="the recovered line")
    assert "Explain the README" in _daily_text(served)
    assert front_matter(response_for(request))["revision"] == meta["revision"] == 1


def test_a_marker_whose_response_did_not_change_writes_no_line(served: Path) -> None:
    # Killed before its answer was written: the start-up scan answers it (and notes it) anew.
    layout = find_repo(served)
    request = served / ".scratchpad_logs" / "a_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    written: list[object] = []
    journal = AnswerJournal(layout, written.append)

    def killed(path: Path) -> OutcomeLike:
        raise KeyboardInterrupt  # the run stops before writing anything

    with contextlib.suppress(KeyboardInterrupt):
        journal.wrap(killed)(request)
    marker = next((layout.state_dir / "answering").glob("*.json"), None)
    assert marker is None  # an exception clears the marker; only a kill leaves one
    (layout.state_dir / "answering").mkdir(parents=True, exist_ok=True)
    (layout.state_dir / "answering" / "m.json").write_text(
        json.dumps({"request": str(request), "response": str(response_for(request))})
    )
    assert journal.recover(logging.getLogger("test")) == 0
    assert written == []
    assert not list((layout.state_dir / "answering").iterdir())
