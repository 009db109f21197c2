"""What the worker remembers it handled: the request's version and the response it left."""

from __future__ import annotations

import logging
from pathlib import Path

from daemon.helpers import wait_until
from nexusd.daemon.debounce import Debouncer, file_key
from nexusd.daemon.watcher import RequestWatcher, closes_are_reported
from nexusd.daemon.worker import HandledFiles

REQUEST = "2025-04-20T08_11_37_plan_request.md"
RESPONSE = "2025-04-20T08_11_37_plan_response.md"


def _handled_pair(folder: Path) -> tuple[Path, HandledFiles]:
    folder.mkdir(parents=True, exist_ok=True)
    request = folder / REQUEST
    request.write_text("---\ngoal: remember me\n---\n", encoding="utf-8")
    (folder / RESPONSE).write_text("---\nstatus: ok\n---\nthe answer\n", encoding="utf-8")
    handled = HandledFiles()
    key = file_key(request)
    assert key is not None
    handled.remember(request, key)
    return request, handled


def test_a_deleted_or_replaced_response_makes_the_request_unhandled(tmp_path: Path) -> None:
    request, handled = _handled_pair(tmp_path / ".scratchpad_logs")
    assert handled.is_current(request)

    (tmp_path / ".scratchpad_logs" / RESPONSE).unlink()
    assert not handled.is_current(request)

    (tmp_path / ".scratchpad_logs" / RESPONSE).write_text("someone else's\n", encoding="utf-8")
    assert not handled.is_current(request)


def test_the_rescan_hands_on_a_request_whose_response_was_deleted(tmp_path: Path) -> None:
    request, handled = _handled_pair(tmp_path / ".scratchpad_logs")
    ready: list[Path] = []
    debouncer = Debouncer(
        ready.append, debounce=0.05, write_grace=5.0, track_closes=closes_are_reported()
    )
    watcher = RequestWatcher(
        tmp_path, [Path(".scratchpad_logs")], debouncer, logging.getLogger("test")
    )
    debouncer.start()
    try:
        # No observer: the deletion makes no event, only the rescan can notice it.
        assert watcher.scan(known=handled.is_current) == 0
        (tmp_path / ".scratchpad_logs" / RESPONSE).unlink()

        assert watcher.scan(known=handled.is_current) == 1
        wait_until(lambda: ready, what="the request handed on")
        assert ready == [request]
    finally:
        debouncer.stop()
