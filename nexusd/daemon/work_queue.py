"""A bounded FIFO of request paths with de-duplication.

A path already waiting is not queued twice (it is read when its turn comes, so
the latest content wins). When the queue is full the path is dropped and the
overflow is remembered; the worker then asks for a rescan, which finds it again.
`dropped` counts the requests turned away, each once: the rescan after an overflow
hands the same paths on again, and finding the queue full again is not another request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path


class WorkQueue:
    """Bounded, de-duplicating queue of paths, safe across threads."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = max(1, maxsize)
        self._items: OrderedDict[Path, None] = OrderedDict()
        self._cond = threading.Condition()
        self._overflowed = False
        self._dropped: set[Path] = set()  # every path turned away (queued later or not)

    def put(self, path: Path) -> bool:
        """Queue `path`; True if it is (now or already) waiting, False if dropped as full."""
        with self._cond:
            if path in self._items:
                return True
            if len(self._items) >= self.maxsize:
                self._overflowed = True
                self._dropped.add(path)
                return False
            self._items[path] = None
            self._cond.notify()
            return True

    def get(self, timeout: float) -> Path | None:
        """The oldest path, or None after `timeout` seconds with nothing queued."""
        with self._cond:
            if not self._items:
                self._cond.wait(timeout)
            if not self._items:
                return None
            path, _ = self._items.popitem(last=False)
            return path

    @property
    def dropped(self) -> int:
        """How many requests (paths) found the queue full, each counted once."""
        with self._cond:
            return len(self._dropped)

    def take_overflow(self) -> bool:
        """True once after paths were dropped since the last call."""
        with self._cond:
            overflowed, self._overflowed = self._overflowed, False
            return overflowed

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def __contains__(self, path: object) -> bool:
        with self._cond:
            return path in self._items
