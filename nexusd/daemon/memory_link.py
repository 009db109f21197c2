"""The daemon's memory: the index service, its search socket, and a watcher on memory files.

Edits to MEMORY.md, daily notes and the configured extra globs are synced within
a fraction of a second (only changed chunks are embedded again); a periodic
reconcile catches anything the watcher missed. Only writes, creations, deletions and
moves are watched, and a file is synced only when its bytes hash differently from the
last sync: the sync's own reads (open, close-without-write) and re-saves of the same
text cost nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from nexusd.code.reader import read_inside
from nexusd.config import Config
from nexusd.daemon.logs import log_event
from nexusd.memory.sources import list_memory_files, relative
from nexusd.paths import RepoLayout

# Edits are batched this long: a burst of daily-note appends costs one sync, and a note
# is still searchable well within a second.
FLUSH_SECONDS = 0.4
# A sync (an embedding, a LanceDB commit) waits while a request is being answered, and
# until none has been for IDLE_SECONDS (requests come in bursts: the next one should not
# find the CPU busy with the last one's daily note); but never longer than this.
MAX_DEFER_SECONDS = 5.0
IDLE_SECONDS = 0.25
FLUSH_THREAD = "nexusd-memory-sync"
# Not opened / closed-without-write: every read of a memory file (the sync's own, an
# editor's, a search's) reports those, and reacting to them re-synced forever.
_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
]


def watch_roots(root: Path, config: Config) -> list[tuple[Path, bool]]:
    """(folder, recursive) pairs covering every memory source, as narrow as the globs allow."""
    roots: dict[Path, bool] = {root: False}
    for pattern in [*config.memory.sources, *config.memory.extra_globs]:
        fixed = []
        for part in Path(pattern).parts[:-1]:
            if any(c in part for c in "*?["):
                break
            fixed.append(part)
        folder = root.joinpath(*fixed)
        recursive = "**" in pattern or len(fixed) < len(Path(pattern).parts) - 1
        roots[folder] = roots.get(folder, False) or recursive
    return sorted(roots.items())


def content_hash(root: Path, path: Path, max_bytes: int) -> str | None:
    """sha256 of a regular memory file's bytes; None when it is gone, unreadable or refused."""
    # What the sync itself would index: never a FIFO (its open blocked the sync thread
    # forever), a device or a file outside the repository; nothing over the size cap (the
    # sync skips it too, so it has nothing to hash). Links inside the repository count.
    data = read_inside(root, path, max_bytes, inside_links=True, setting="memory.max_file_bytes")
    return hashlib.sha256(data).hexdigest() if isinstance(data, bytes) else None


def _one_torch_thread() -> None:
    """Embed on one core: the daemon answers requests (git, sandbox) on the other, and a
    short query is faster single-threaded than fighting for both cores. Set before torch
    is imported (in the loader thread), so start-up does not wait for the import."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")


class _Events(FileSystemEventHandler):
    def __init__(self, link: MemoryLink) -> None:
        self.link = link

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.link.touch(Path(raw if isinstance(raw, str) else raw.decode()))


class MemoryLink:
    """Service: MemoryService + SearchServer + memory-file watcher + sync thread."""

    name = "memory"

    def __init__(self, layout: RepoLayout, config: Config, logger: logging.Logger) -> None:
        from nexusd.memory.service import MemoryService

        self.layout = layout
        self.config = config
        self.logger = logger
        self.service = MemoryService(layout, config)
        self._server: Any = None
        # Other ops the search socket answers (the code index's), set before start().
        self.extra_ops: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self._observer: Any = None
        self._pending: set[Path] = set()
        # Content hash of each memory file as last synced (or seen at start).
        self._hashes: dict[Path, str | None] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._answering = 0
        self._answered_at = 0.0
        self._idle = threading.Condition()

    def touch(self, path: Path) -> None:
        """Queue a changed path for sync if it is a memory file."""
        if path.suffix != ".md" or not self.service.is_memory_path(path):
            return
        with self._lock:
            self._pending.add(path)
        self._wake.set()

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """Mark a request as being answered: syncs wait for it (at most MAX_DEFER_SECONDS)."""
        with self._idle:
            self._answering += 1
        try:
            yield
        finally:
            with self._idle:
                self._answering -= 1
                self._answered_at = time.monotonic()
                self._idle.notify_all()

    def _wait_idle(self) -> None:
        deadline = time.monotonic() + MAX_DEFER_SECONDS
        with self._idle:
            while not self._stop.is_set():
                now = time.monotonic()
                quiet_in = self._answered_at + IDLE_SECONDS - now
                if not self._answering and quiet_in <= 0:
                    return
                left = deadline - now
                if left <= 0:
                    return
                # The end of an answer notifies; the poll is only a safety net.
                self._idle.wait(min(left, 0.1 if self._answering else quiet_in))

    def start(self) -> None:
        """Open the index, load the model in the background, serve searches, watch files."""
        from nexusd.memory.server import SearchServer

        self.layout.daily_dir.mkdir(parents=True, exist_ok=True)
        _one_torch_thread()
        # Before the start-up reconcile reads them: a change after this is a new hash.
        self._seed_hashes()
        self.service.start()
        self._server = SearchServer(self.layout, self.service, self.extra_ops)
        self._server.start()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=FLUSH_THREAD, daemon=True)
        self._thread.start()
        observer = Observer()
        handler = _Events(self)
        for folder, recursive in watch_roots(self.layout.root, self.config):
            if folder.is_dir():
                observer.schedule(handler, str(folder), recursive=recursive, event_filter=_EVENTS)
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        """Stop watching, finish the sync in hand, close the socket and the service."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(10)
            self._observer = None
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.service.stop()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            # Let an editor's burst of events (write temp, rename, chmod) settle first.
            self._stop.wait(FLUSH_SECONDS)
            self._wait_idle()
            self._wake.clear()
            with self._lock:
                pending, self._pending = self._pending, set()
            paths = self._changed(pending)
            if not paths:
                continue
            try:
                report = self.service.sync_paths(paths)
                log_event(
                    self.logger,
                    logging.INFO,
                    "memory synced",
                    files=len(paths),
                    paths=sorted(relative(self.layout.root, p) or str(p) for p in paths),
                    written=report.written,
                    removed=report.removed,
                    embedded=report.embedded,
                )
                # After the sync, not inside it: the new text is searchable meanwhile.
                self.service.compact_if_due()
            except Exception as exc:
                for path in paths:  # not synced: the next event on them must sync again
                    self._hashes.pop(path, None)
                log_event(self.logger, logging.ERROR, "memory sync failed", error=str(exc))

    def _seed_hashes(self) -> None:
        for rel in list_memory_files(self.layout.root, self.config):
            path = self.layout.root / rel
            self._hashes[path] = self._hash(path)

    def _hash(self, path: Path) -> str | None:
        return content_hash(self.layout.root, path, self.config.memory.max_file_bytes)

    def _changed(self, paths: set[Path]) -> set[Path]:
        """The paths whose bytes differ from the last sync; their new hashes are recorded."""
        changed: set[Path] = set()
        for path in paths:
            digest = self._hash(path)
            if path in self._hashes and self._hashes[path] == digest:
                continue
            self._hashes[path] = digest
            changed.add(path)
        return changed

    def reconcile(self) -> None:
        """Scheduled and after merges/checkouts: compare all memory files with the index."""
        self.service.reconcile()

    def optimize(self) -> None:
        """Scheduled: compact fragments and refresh the full-text index."""
        self.service.optimize()
