"""The watcher: a watchdog observer on each watched folder, feeding the debouncer.

Each configured folder (`watch.paths`, relative to the repository root) that
exists is watched non-recursively; requests live directly in it. The root is
watched non-recursively too, so a folder created later (by `nexusd init`, a
`git checkout`, a `mkdir`) is picked up at once; deeper folders that appear
later are picked up by the periodic rescan. A folder deleted and recreated is
re-watched the same way. `scan()` lists every request in the watched folders
(startup and periodic rescans); `known` filters the ones already handled. A folder
that resolves outside the repository (a symbolic link to elsewhere, another
worktree's folder) is neither watched nor scanned: it is logged once instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from nexusd.code.selection import utf8_name
from nexusd.daemon.debounce import Debouncer, Touch
from nexusd.daemon.logs import log_event
from nexusd.protocol.naming import is_request_file, is_response_file, request_path_for

_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirMovedEvent,
]


def closes_are_reported() -> bool:
    """True where the observer reports IN_CLOSE_WRITE (Linux inotify)."""
    return platform.system() == "Linux"


def _as_path(raw: bytes | str) -> Path:
    return Path(os.fsdecode(raw))


def _make_observer() -> BaseObserver:
    if closes_are_reported():
        # Full events: a file moved in from an unwatched folder is a move (complete), not a
        # create (which would make us wait for a close that never comes).
        from watchdog.observers.inotify import InotifyObserver

        return InotifyObserver(timeout=0.2, generate_full_events=True)
    return Observer(timeout=0.2)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: RequestWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self.watcher.handle(event)
        except Exception:  # an event must never kill the observer thread
            self.watcher.logger.exception("watcher: failed to handle %s", event)


class RequestWatcher:
    """Watches the request folders and the inbox; owns the watchdog observer."""

    name = "watcher"

    def __init__(
        self,
        root: Path,
        folders: list[Path],
        debouncer: Debouncer,
        logger: logging.Logger,
        *,
        extra_dirs: dict[Path, Callable[[], None]] | None = None,
        on_watch_change: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.folders = [Path(os.path.normpath(root / f)) for f in folders]
        self.debouncer = debouncer
        self.logger = logger
        # Other folders whose any change calls a callback (the git-hook inbox).
        self.extra_dirs = dict(extra_dirs or {})
        self.on_watch_change = on_watch_change
        self._observer: BaseObserver | None = None
        self._watches: dict[Path, tuple[ObservedWatch, tuple[int, int]]] = {}
        self._lock = threading.Lock()
        self._handler = _Handler(self)
        # Entries named like requests that are not files, each logged once (by inode).
        self._ignored: dict[Path, tuple[int, int]] = {}
        # Configured folders that resolve outside the root, each logged once per target.
        self._outside: dict[Path, Path] = {}

    def start(self) -> None:
        """Start the observer and watch every folder that exists now."""
        observer = _make_observer()
        observer.start()
        self._observer = observer
        self._schedule(self.root)
        for folder in [*self.folders, *self.extra_dirs]:
            self.ensure_watched(folder)

    def stop(self) -> None:
        """Stop the observer and join its threads."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join()
        with self._lock:
            self._watches.clear()

    def watched(self) -> list[str]:
        """The request folders being watched now (not one deleted since it was watched)."""
        with self._lock:
            folders = [p for p in self._watches if p in self.folders]
        return sorted(str(p) for p in folders if p.is_dir())

    def missing(self) -> list[str]:
        """Configured folders that do not exist (yet)."""
        return sorted(str(p) for p in self.folders if not p.is_dir())

    def ensure_watched(self, folder: Path, *, renew: bool = False) -> bool:
        """Watch `folder` if it exists and is not watched (or was deleted and recreated).

        `renew` replaces the watch even if it looks current (the folder was just created:
        inode numbers are reused, and the old watch dies asynchronously).
        Returns True when a new watch was added (the caller should scan the folder).
        """
        try:
            st = folder.stat()
        except OSError:
            return False
        if not folder.is_dir():
            return False
        if folder in self.folders and self._refuse_outside(folder):
            return False
        ident = (st.st_dev, st.st_ino)
        with self._lock:
            current = self._watches.get(folder)
            if (
                not renew
                and current is not None
                and current[1] == ident
                and self._alive(current[0])
            ):
                return False
        return self._schedule(folder, ident)

    def _refuse_outside(self, folder: Path) -> bool:
        """True (logged once, any watch dropped) when `folder` resolves outside the root."""
        try:
            target = folder.resolve()
            inside = target.is_relative_to(self.root.resolve())
        except OSError:
            return True
        if inside:
            with self._lock:
                self._outside.pop(folder, None)
            return False
        with self._lock:
            old = self._watches.pop(folder, None)
            logged = self._outside.get(folder) == target
            self._outside[folder] = target
        observer = self._observer
        if old is not None and observer is not None:
            with contextlib.suppress(KeyError):
                observer.unschedule(old[0])
        if not logged:
            log_event(
                self.logger,
                logging.WARNING,
                "not watching folder: it resolves outside the repository",
                path=str(folder),
                target=str(target),
                fix="make it a real folder inside the repository, not a link to elsewhere",
            )
        return True

    def _alive(self, watch: ObservedWatch) -> bool:
        observer = self._observer
        if observer is None:
            return False
        try:
            emitters = list(observer.emitters)
        except RuntimeError:  # the set changed while copied: ask again at the next rescan
            return True
        return any(e.watch == watch and e.is_alive() for e in emitters)

    def _schedule(self, folder: Path, ident: tuple[int, int] | None = None) -> bool:
        observer = self._observer
        if observer is None:
            return False
        with self._lock:
            old = self._watches.pop(folder, None)
        if old is not None:
            # KeyError: the emitter already stopped itself when the folder was deleted.
            with contextlib.suppress(KeyError):
                observer.unschedule(old[0])
        try:
            watch = observer.schedule(
                self._handler, str(folder), recursive=False, event_filter=_EVENTS
            )
        except OSError as exc:
            log_event(
                self.logger,
                logging.WARNING,
                "cannot watch folder",
                path=str(folder),
                error=str(exc),
            )
            return False
        if ident is None:
            st = folder.stat()
            ident = (st.st_dev, st.st_ino)
        with self._lock:
            self._watches[folder] = (watch, ident)
        log_event(self.logger, logging.INFO, "watching folder", path=str(folder))
        if self.on_watch_change is not None:
            self.on_watch_change()
        return True

    def handle(self, event: FileSystemEvent) -> None:
        """Route one watchdog event: request files to the debouncer, new folders to a watch."""
        if isinstance(event, FileMovedEvent | DirMovedEvent):
            if not event.dest_path:
                return  # moved out of a watched folder
            target = _as_path(event.dest_path)
        else:
            target = _as_path(event.src_path)
        if event.is_directory:
            wanted = target in self.folders or target in self.extra_dirs
            if wanted and self.ensure_watched(target, renew=True):
                self.scan_folder(target)
            elif target.parent in self.folders and is_request_file(target):
                self.report_ignored(target)
            return
        parent = target.parent
        callback = self.extra_dirs.get(parent)
        if callback is not None:
            if not isinstance(event, FileDeletedEvent):  # the inbox deletes what it ran
                callback()
            return
        if parent not in self.folders:
            return
        if isinstance(event, FileDeletedEvent):
            # A deleted response asks for a fresh answer (PROTOCOL.md); the rescan would
            # find it too, this is only sooner.
            if is_response_file(target):
                request = request_path_for(target)
                if request.is_file():
                    self.debouncer.touch(request, Touch.APPEAR)
            return
        if not is_request_file(target):
            return
        if isinstance(event, FileClosedEvent):
            kind = Touch.CLOSE
        elif isinstance(event, FileMovedEvent):
            kind = Touch.APPEAR
        else:
            kind = Touch.WRITE
        if not self.report_ignored(target):
            self.debouncer.touch(target, kind)

    def report_ignored(self, path: Path) -> bool:
        """Log (once) that `path`, named like a request, is skipped: a FIFO, folder or device,
        or a name that is not UTF-8.

        Regular files and links are not reported (links get an error response instead). A
        name too long to have a response is not skipped here: answering it fails with the
        fix, shown by `nexusd status` like any request that cannot be answered.
        """
        try:
            st = path.lstat()
        except OSError:
            return False
        mode = st.st_mode
        utf8 = utf8_name(path.name)
        if utf8 and (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            return False
        ident = (st.st_dev, st.st_ino)
        with self._lock:
            if self._ignored.get(path) == ident:
                return True
            self._ignored[path] = ident
        if not utf8:
            # Its response's `request_file` (UTF-8 YAML) could not name it faithfully.
            log_event(
                self.logger,
                logging.WARNING,
                "ignored: the file name is not valid UTF-8",
                path=str(path),
                fix="rename the request to a UTF-8 name; nexusd answers it then",
            )
            return True
        kind = "folder" if stat.S_ISDIR(mode) else "FIFO" if stat.S_ISFIFO(mode) else "special file"
        log_event(
            self.logger,
            logging.WARNING,
            "ignored: named like a request but not a regular file",
            path=str(path),
            kind=kind,
            fix="write the request as a regular file under that name",
        )
        return True

    def scan_folder(self, folder: Path, known: Callable[[Path], bool] | None = None) -> int:
        """Hand every request in `folder` that `known` does not recognise to the debouncer."""
        count = 0
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return 0
        for entry in entries:
            path = Path(entry.path)
            if not is_request_file(path) or self.report_ignored(path):
                continue
            if known is not None and known(path):
                continue
            self.debouncer.touch(path, Touch.FOUND)
            count += 1
        return count

    def scan(self, known: Callable[[Path], bool] | None = None) -> int:
        """Re-check folders (watch new ones) and hand unhandled requests on; returns how many."""
        count = 0
        for folder in self.folders:
            self.ensure_watched(folder)
            if folder.is_dir() and self._refuse_outside(folder):
                continue
            count += self.scan_folder(folder, known)
        for folder in self.extra_dirs:
            self.ensure_watched(folder)
        return count
