"""The worker: the one thread that answers requests, one at a time, in queue order.

Exactly-once across crashes rests on the pipeline: a response records the sha256
of the request it answers and is written atomically, so answering the same
content again is a cheap "skipped". The worker adds an in-memory map of what it
handled, keyed by (mtime, size, inode) of the request and of its response, so
rescans do not even re-read unchanged files, yet notice a deleted response. An
attempt that wrote nothing (the folder was unwritable, an error was raised) is
due again after a growing delay, so a rescan retries it once the cause is gone.
Any error is logged and counted; the worker keeps going.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nexusd.daemon.debounce import FileKey, file_key
from nexusd.daemon.logs import log_event
from nexusd.daemon.status import DaemonStats, utc_now
from nexusd.daemon.work_queue import WorkQueue
from nexusd.protocol.naming import response_path_for
from nexusd.protocol.reading import content_sha256, response_meta

# A failed attempt is due again after RETRY_FIRST seconds, doubling up to RETRY_MAX: a
# permanent failure costs one attempt per RETRY_MAX, not one per rescan.
RETRY_FIRST = 2.0
RETRY_MAX = 600.0


class OutcomeLike(Protocol):
    """What the worker reads from the pipeline's Outcome."""

    @property
    def status(self) -> str: ...
    @property
    def revision(self) -> int | None: ...
    @property
    def sha256(self) -> str: ...
    @property
    def message(self) -> str | None: ...
    @property
    def response_path(self) -> Path | None: ...


Answer = Callable[[Path], OutcomeLike]


@dataclass(frozen=True)
class _Handled:
    key: FileKey  # the request's version handled
    response: FileKey | None  # its response as the attempt left it
    sha256: str | None  # the request content that attempt read (None: not known)
    retry_at: float | None  # when an attempt that wrote nothing is due again (monotonic)
    failures: int  # attempts in a row that wrote nothing


def retry_delay(failures: int) -> float:
    """Seconds before attempt `failures` + 1 of a request whose attempts wrote nothing."""
    return min(RETRY_FIRST * 2.0 ** min(max(failures - 1, 0), 30), RETRY_MAX)


class HandledFiles:
    """Which version of each request file was handled, and the response it left (thread-safe).

    The response counts: deleting it asks for a fresh answer (PROTOCOL.md), and a response
    replaced by someone else is looked at again; the request alone is unchanged then.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._keys: dict[Path, _Handled] = {}

    def is_current(self, path: Path) -> bool:
        """True when `path` and its response are unchanged since it was handled (and it is
        not due for another attempt)."""
        key = file_key(path)
        return key is not None and self.matches(path, key)

    def matches(self, path: Path, key: FileKey) -> bool:
        """True when version `key` of `path` was handled, its response is as it left it,
        and no retry of an attempt that wrote nothing is due."""
        with self._lock:
            seen = self._keys.get(path)
        if seen is None or (seen.key, seen.response) != (key, response_key(path)):
            return False
        return seen.retry_at is None or self._clock() < seen.retry_at

    def content_changed(self, path: Path) -> bool:
        """True when the bytes of `path` are not the ones handled: an edit that kept size and
        mtime (`cp -p`, `touch -d`) has the same stat key; its hash tells it apart."""
        with self._lock:
            seen = self._keys.get(path)
        if seen is None or seen.sha256 is None:
            return False
        now = content_sha256(path)
        return now is not None and now != seen.sha256

    def forget(self, path: Path) -> None:
        """Drop what is known of `path`: the next time it is seen, it is handled anew."""
        with self._lock:
            self._keys.pop(path, None)

    def forget_gone(self, gone: Callable[[Path], bool]) -> int:
        """Drop what is known of the requests `gone` says are no longer there (deleted
        after their answer); how many. A daemon's memory stays the size of its requests."""
        with self._lock:
            paths = list(self._keys)
        dropped = [path for path in paths if gone(path)]
        with self._lock:
            for path in dropped:
                self._keys.pop(path, None)
        return len(dropped)

    def remember(
        self,
        path: Path,
        key: FileKey,
        *,
        wrote_response: bool = False,
        sha256: str | None = None,
        failed: bool = False,
    ) -> float | None:
        """Record that this version of `path` was handled (with its response as it is now).

        `wrote_response`: the answer wrote one, so a response already gone was deleted
        in the meantime and the request still wants an answer. `failed`: the attempt wrote
        nothing, so it is due again later; returns in how many seconds (None otherwise).
        """
        response = response_key(path)
        if response is None and wrote_response:
            response = _DELETED
        with self._lock:
            old = self._keys.get(path)
            failures = 0
            retry_at = delay = None
            if failed:
                failures = old.failures + 1 if old is not None and old.key == key else 1
                delay = retry_delay(failures)
                retry_at = self._clock() + delay
            self._keys[path] = _Handled(key, response, sha256, retry_at, failures)
        return delay


# Never the key of a real file: matches no response, present or absent.
_DELETED: FileKey = (-1, -1, -1)


def response_key(request: Path) -> FileKey | None:
    """The stat key of the request's response (None when there is none)."""
    try:
        return file_key(response_path_for(request))
    except ValueError:  # not a request name: there is no response to follow
        return None


def wrote_nothing(path: Path, outcome: OutcomeLike, response_before: FileKey | None) -> bool:
    """True when an attempt left no answer to this content: worth another try later."""
    if outcome.status in ("ok", "skipped"):
        return False
    if response_key(path) != response_before:
        return False  # an error response was written (or someone changed the response)
    if outcome.sha256:
        # The same setup failure is not written twice: the response answers this content.
        _, meta = response_meta(response_path_for(path))
        if meta is not None and meta.get("request_sha256") == outcome.sha256:
            return False
    return True


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
        before = response_key(path)
        wrote = False
        failed = True
        gone = False
        sha: str | None = None
        try:
            outcome = self.answer(path)
            # Deleted (or renamed away) before its answer was written: this version was not
            # handled. Remembering it would take the same file renamed back (same inode, size
            # and mtime) for an answered one, and it would never be answered.
            gone = bool(getattr(outcome, "gone", False))
            # "ok" is only returned once the response is written ("error" may mean none could be).
            wrote = outcome.status == "ok"
            sha = outcome.sha256 or None
            failed = wrote_nothing(path, outcome, before)
        except Exception as exc:
            ms = round((time.perf_counter() - started) * 1000, 1)
            self.stats.add("failures")
            self.stats.record_error(path, f"{type(exc).__name__}: {exc}")
            log_event(
                self.logger, logging.ERROR, "request failed", exc_info=True, path=str(path), ms=ms
            )
        else:
            ms = round((time.perf_counter() - started) * 1000, 1)
            self._record(path, outcome, ms, written=response_key(path) != before)
            self._record_kept(path, outcome)
        finally:
            self.stats.set(in_flight=None)
        if gone:
            self.handled.forget(path)
            return
        # Remember even failures, so rescans do not spin on them; one that wrote nothing is
        # due again after a growing delay (and at once when the file or its response changes).
        delay = self.handled.remember(path, key, wrote_response=wrote, sha256=sha, failed=failed)
        if delay is not None:
            log_event(self.logger, logging.INFO, "will retry", path=str(path), after_s=delay)

    def _record_kept(self, path: Path, outcome: OutcomeLike) -> None:
        # A response someone changed, moved aside for the new one: they must hear where it is.
        for kept in getattr(outcome, "kept", ()):
            log_event(
                self.logger,
                logging.WARNING,
                "kept a changed response beside the new one",
                path=str(path),
                response=str(kept.response),
                kept=str(kept.path),
                message=kept.note(),
            )

    def _record(self, path: Path, outcome: OutcomeLike, ms: float, *, written: bool) -> None:
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
            # Only a response this attempt wrote is logged as one (a client waits for it): a
            # refusal that kept someone's response wrote none.
            response = outcome.response_path
            # A stat key, not Path.is_file: that raises for a name too long to be a file.
            written = written and response is not None and file_key(response) is not None
            event = "answered with an error" if written else "not answered (no response written)"
            if not written:
                fields["response"] = None
            log_event(self.logger, logging.WARNING, event, message=message, **fields)
        self.stats.set(last_answered={"at": utc_now(), **fields})
