"""Debouncing: a path is handed on only once its writer is done with it.

Done means: no event for `debounce` seconds, the file's (size, mtime, inode)
unchanged across that interval, and — where the platform reports closes
(inotify's IN_CLOSE_WRITE) — the last writer has closed it. A file its writer
closed, or one renamed into place, is as complete as it will get, so it waits
only the much shorter `settle` (for a writer that reopens it at once, as
`echo a > f; echo b >> f` does). A file modified but never closed is handed on
anyway after `write_grace` seconds of silence, so a writer that crashed (or a
platform without close events) cannot block it forever.
"""

from __future__ import annotations

import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

FileKey = tuple[int, int, int]


class Touch(Enum):
    """What an event says about a file."""

    WRITE = "write"  # created or modified: a writer may still hold it open
    CLOSE = "close"  # a writer closed it (IN_CLOSE_WRITE)
    APPEAR = "appear"  # renamed into place: complete as far as we know
    # Found by a scan: complete as far as we know, unless events already follow it (a
    # rescan must not cut short the wait for a writer that still holds the file open).
    FOUND = "found"


def file_key(path: Path) -> FileKey | None:
    """(mtime_ns, size, inode) of `path`, or None when it is gone or not a regular file.

    A symbolic link has the key of the link itself: it is handed on (never followed) so
    that it gets an error response instead of silence.
    """
    try:
        st = path.lstat()
    except OSError:
        return None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass
class _Pending:
    due: float
    key: FileKey | None
    writing: bool
    last_event: float


class Debouncer:
    """A thread that waits for each touched path to settle, then calls `on_ready(path)`."""

    name = "debouncer"

    def __init__(
        self,
        on_ready: Callable[[Path], None],
        *,
        debounce: float,
        write_grace: float,
        track_closes: bool,
        settle: float | None = None,
    ) -> None:
        self.on_ready = on_ready
        self.debounce = max(debounce, 0.001)
        self.settle = self.debounce if settle is None else min(max(settle, 0.0), self.debounce)
        self.write_grace = max(write_grace, self.debounce)
        self.track_closes = track_closes
        self._pending: dict[Path, _Pending] = {}
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def touch(self, path: Path, kind: Touch) -> None:
        """Note an event for `path`; (re)starts its quiet interval."""
        now = time.monotonic()
        key = file_key(path)
        quiet = self.debounce if kind is Touch.WRITE else self.settle
        with self._cond:
            entry = self._pending.get(path)
            writing = self.track_closes and kind is Touch.WRITE
            if entry is None:
                self._pending[path] = _Pending(now + quiet, key, writing, now)
            elif kind is Touch.FOUND:
                pass  # already pending: its own events decide when it is complete
            else:
                entry.due = now + quiet
                entry.key = key
                entry.last_event = now
                if kind is Touch.WRITE:
                    entry.writing = writing
                else:
                    entry.writing = False
            self._cond.notify()

    def pending(self) -> int:
        """How many paths are waiting to settle."""
        with self._cond:
            return len(self._pending)

    def start(self) -> None:
        """Start the settling thread."""
        self._thread = threading.Thread(target=self._run, name="nexusd-debounce", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread; paths still settling are left to the next startup scan."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            ready = self._collect_ready()
            for path in ready:
                self.on_ready(path)

    def _collect_ready(self) -> list[Path]:
        with self._cond:
            if not self._pending:
                self._cond.wait(0.5)
                return []
            now = time.monotonic()
            soonest = min(entry.due for entry in self._pending.values())
            if soonest > now:
                self._cond.wait(soonest - now)
                return []
            due = [p for p, entry in self._pending.items() if entry.due <= now]
        ready: list[Path] = []
        for path in due:
            key = file_key(path)  # stat outside the lock: events keep flowing
            with self._cond:
                entry = self._pending.get(path)
                if entry is None or entry.due > now:
                    continue  # touched again meanwhile
                if key is None:
                    del self._pending[path]  # deleted or replaced by a directory
                elif key != entry.key:
                    entry.key = key  # still changing without events: wait another interval
                    entry.due = now + self.debounce
                elif entry.writing and now - entry.last_event < self.write_grace:
                    entry.due = entry.last_event + self.write_grace  # wait for the close
                else:
                    del self._pending[path]
                    ready.append(path)
        return ready
