"""The worker: the one thread that answers requests, one at a time, in queue order.

Exactly-once across crashes rests on the pipeline: a response records the sha256
of the request it answers and is written atomically, so answering the same
content again is a cheap "skipped". The worker adds an in-memory map of what it
handled, keyed by (mtime, size, inode) of the request and of its response, so
rescans do not even re-read unchanged files, yet notice a deleted response. Any
error is logged and counted; the worker keeps going.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from nexusd.daemon.debounce import FileKey, file_key
from nexusd.daemon.logs import log_event
from nexusd.daemon.status import DaemonStats, utc_now
from nexusd.daemon.work_queue import WorkQueue
from nexusd.protocol.naming import response_path_for


class OutcomeLike(Protocol):
    """What the worker reads from the pipeline's Outcome."""

    @property
    def status(self) -> str: ...
    @property
    def revision(self) -> int | None: ...
    @property
    def message(self) -> str | None: ...
    @property
    def response_path(self) -> Path | None: ...


Answer = Callable[[Path], OutcomeLike]


class HandledFiles:
    """Which version of each request file was handled, and the response it left (thread-safe).

    The response counts: deleting it asks for a fresh answer (PROTOCOL.md), and a response
    replaced by someone else is looked at again; the request alone is unchanged then.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[Path, tuple[FileKey, FileKey | None]] = {}

    def is_current(self, path: Path) -> bool:
        """True when `path` and its response are unchanged since it was handled."""
        key = file_key(path)
        return key is not None and self.matches(path, key)

    def matches(self, path: Path, key: FileKey) -> bool:
        """True when version `key` of `path` was handled and its response is as it left it."""
        with self._lock:
            seen = self._keys.get(path)
        return seen is not None and seen == (key, _response_key(path))

    def remember(self, path: Path, key: FileKey, *, wrote_response: bool = False) -> None:
        """Record that this version of `path` was handled (with its response as it is now).

        `wrote_response`: the answer wrote one, so a response already gone was deleted
        in the meantime and the request still wants an answer.
        """
        response = _response_key(path)
        if response is None and wrote_response:
            response = _DELETED
        with self._lock:
            self._keys[path] = (key, response)


# Never the key of a real file: matches no response, present or absent.
_DELETED: FileKey = (-1, -1, -1)


def _response_key(request: Path) -> FileKey | None:
    try:
        return file_key(response_path_for(request))
    except ValueError:  # not a request name: there is no response to follow
        return None


class Worker:
    """Takes paths from the queue and answers them with `answer(path)`."""

    name = "worker"

    def __init__(
        self,
        queue: WorkQueue,
        answer: Answer,
        stats: DaemonStats,
        logger: logging.Logger,
        *,
        handled: HandledFiles,
        on_overflow: Callable[[], None],
    ) -> None:
        self.queue = queue
        self.answer = answer
        self.stats = stats
        self.logger = logger
        self.handled = handled
        self.on_overflow = on_overflow
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the worker thread."""
        self._thread = threading.Thread(target=self._run, name="nexusd-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Finish the request in flight, then stop (queued paths wait for the next start)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            path = self.queue.get(timeout=0.2)
            self.stats.set(queued=len(self.queue))
            if path is None:
                if self.queue.take_overflow():
                    log_event(self.logger, logging.WARNING, "queue overflowed; rescanning")
                    self.on_overflow()
                continue
            self.process(path)

    def process(self, path: Path) -> None:
        """Answer one request unless this version of it was already handled."""
        key = file_key(path)
        if key is None:
            return  # deleted (or renamed away) while queued
        if self.handled.matches(path, key):
            self.stats.add("unchanged")
            return
        self.stats.set(in_flight=str(path))
        started = time.perf_counter()
        wrote = False
        try:
            outcome = self.answer(path)
            # "ok" is only returned once the response is written ("error" may mean none could be).
            wrote = outcome.status == "ok"
        except Exception as exc:
            ms = round((time.perf_counter() - started) * 1000, 1)
            self.stats.add("failures")
            self.stats.record_error(path, f"{type(exc).__name__}: {exc}")
            log_event(
                self.logger, logging.ERROR, "request failed", exc_info=True, path=str(path), ms=ms
            )
        else:
            self._record(path, outcome, round((time.perf_counter() - started) * 1000, 1))
        finally:
            self.stats.set(in_flight=None)
        # Remember even failures: retried when the file changes or the daemon restarts.
        self.handled.remember(path, key, wrote_response=wrote)

    def _record(self, path: Path, outcome: OutcomeLike, ms: float) -> None:
        status = outcome.status
        fields: dict[str, Any] = {
            "path": str(path),
            "status": status,
            "revision": outcome.revision,
            "response": str(outcome.response_path) if outcome.response_path else None,
            "ms": ms,
        }
        if status == "skipped":
            self.stats.add("skipped")
            # Revision 0: the file at the response path is not ours (kept); worth a line.
            level = logging.INFO if not outcome.revision else logging.DEBUG
            log_event(self.logger, level, "not answered again", message=outcome.message, **fields)
            return
        if status == "ok":
            self.stats.add("answered")
            log_event(self.logger, logging.INFO, "answered", **fields)
        else:
            self.stats.add("errors")
            message = outcome.message or "the request could not be answered"
            self.stats.record_error(path, message)
            written = outcome.response_path is not None and outcome.response_path.is_file()
            # Only a response that is on disk is logged as one: a client waits for it.
            event = "answered with an error" if written else "not answered (no response written)"
            if not written:
                fields["response"] = None
            log_event(self.logger, logging.WARNING, event, message=message, **fields)
        self.stats.set(last_answered={"at": utc_now(), **fields})
