"""A running daemon never appends its daily-note entry through a link out of the repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from daemon.helpers import request_text, wait_answered, wait_until
from nexusd.memory.daily import daily_path
from nexusd.paths import find_repo


def _log_records(repo: Path) -> list[dict[str, object]]:
    log = repo / ".git" / "nexus" / "logs" / "nexusd.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def test_daily_note_linked_to_a_home_file_is_refused_and_logged(
    served: Path, start_daemon: Callable[..., Path], tmp_path: Path
) -> None:
    bashrc = tmp_path / "home-of-someone" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_text("alias ll='ls -l'\n", encoding="utf-8")
    note = daily_path(find_repo(served), datetime.now())
    note.parent.mkdir(parents=True)
    note.symlink_to(bashrc)
    start_daemon(served)
    request = served / ".scratchpad_logs" / "2025-04-20T08_11_37_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"

    def refusal() -> list[dict[str, object]]:
        return [r for r in _log_records(served) if "outside the repository" in str(r)]

    (record,) = wait_until(refusal, what="the refusal in the log")
    assert record["msg"] == "daily note not written", record
    assert str(note) in str(record["error"])
    assert bashrc.read_text(encoding="utf-8") == "alias ll='ls -l'\n"
