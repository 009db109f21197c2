"""What the worker remembers it handled: the request's version and the response it left."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from daemon.helpers import wait_until
from nexusd.daemon.debounce import Debouncer, file_key
from nexusd.daemon.watcher import RequestWatcher, closes_are_reported
from nexusd.daemon.worker import RETRY_FIRST, RETRY_MAX, HandledFiles

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


def test_an_attempt_that_wrote_nothing_is_due_again_later_and_later(tmp_path: Path) -> None:
    folder = tmp_path / ".scratchpad_logs"
    folder.mkdir()
    request = folder / REQUEST
    request.write_text("---\ngoal: retry me\n---\n", encoding="utf-8")
    key = file_key(request)
    assert key is not None
    now = [1000.0]
    handled = HandledFiles(clock=lambda: now[0])

    delays = [handled.remember(request, key, failed=True) for _ in range(12)]

    assert delays[:4] == [RETRY_FIRST, 2 * RETRY_FIRST, 4 * RETRY_FIRST, 8 * RETRY_FIRST]
    assert max(d or 0.0 for d in delays) == delays[-1] == RETRY_MAX  # never spins, never stops
    assert handled.is_current(request)  # not due yet: the rescan leaves it alone
    now[0] += RETRY_MAX
    assert not handled.is_current(request)  # due: the rescan hands it on
    handled.remember(request, key)  # answered at last
    now[0] += 10 * RETRY_MAX
    assert handled.is_current(request)


def test_content_changed_tells_an_edit_that_kept_size_and_mtime(tmp_path: Path) -> None:
    request, handled = _handled_pair(tmp_path / ".scratchpad_logs")
    key = file_key(request)
    assert key is not None
    handled.remember(request, key, sha256=hashlib.sha256(request.read_bytes()).hexdigest())
    before = request.stat()
    assert not handled.content_changed(request)

    request.write_text(request.read_text(encoding="utf-8").replace("me", "us"), encoding="utf-8")
    os.utime(request, ns=(before.st_atime_ns, before.st_mtime_ns))

    assert handled.is_current(request)  # the stat key cannot tell
    assert handled.content_changed(request)


def test_requests_deleted_after_their_answer_are_forgotten(tmp_path: Path) -> None:
    request, handled = _handled_pair(tmp_path / ".scratchpad_logs")
    other, _ = _handled_pair(tmp_path / "docs")
    key = file_key(other)
    assert key is not None
    handled.remember(other, key)
    request.unlink()
    gone = lambda path: not os.path.lexists(path)  # noqa: E731
    assert handled.forget_gone(gone) == 1
    assert handled.forget_gone(gone) == 0  # the daemon's memory no longer holds it
    assert handled.is_current(other)
    request.write_text("---\ngoal: remember me\n---\n", encoding="utf-8")
    assert not handled.is_current(request)  # back: handled anew, its response decides
