"""The daemon's code index: opened and first built in the background, then kept fresh.

Work comes from file events under the repository (created, modified, deleted, moved; never
opens or closes without a write, so the index's own reads cannot wake it) and from the git
hooks' post-checkout, post-merge and post-commit events. A burst of events costs one
incremental update once it has been quiet for QUIET_SECONDS; only changed blobs are parsed.
Everything fails open: an update that raises is logged and the daemon carries on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from nexusd.code.ops import handle_code_op, status_of, status_summary
from nexusd.code.parsers import language_for
from nexusd.code.service import CodeIndex
from nexusd.code.status import UpdateReport
from nexusd.config import Config
from nexusd.daemon.logs import log_event
from nexusd.daemon.status import DaemonStats, utc_now
from nexusd.git import is_attributes_file
from nexusd.paths import RepoLayout

QUIET_SECONDS = 0.3  # an update runs once events have stopped for this long…
MAX_BATCH_SECONDS = 5.0  # …or after this long under a steady stream of them
PUBLISH_SECONDS = 0.5  # progress of a build reaches `nexusd status` this often
# A read (search, symbols, impact) waits this long for the update of files changed just before
# it: an agent that edits a file and searches at once must not get the old file back.
FRESH_WAIT_SECONDS = 2.0
READ_OPS = frozenset({"code_search", "code_symbols", "code_impact"})
STALE_NOTE = (
    "files changed in the last seconds are not in these results yet (the code index is"
    " still updating); ask again in a moment"
)
STOP_JOIN_SECONDS = 60.0
THREAD = "nexusd-code-index"
# Folders at the top of the repository never watched: git's own, nexusd's, memory files.
IGNORED_TOP = frozenset({".git", ".scratchpad_logs", ".scratchpad", "memory", "MEMORY.md"})
# Folders never looked into, wherever they are: other people's code and caches.
IGNORED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
_EVENTS: list[type[FileSystemEvent]] = [
    *(FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent),
    # A new top-level folder needs a watch; `mv pkg /elsewhere` reports no per-file events.
    *(DirCreatedEvent, DirDeletedEvent, DirMovedEvent),
]


class _Stopping(Exception):
    """Raised from the progress callback to cut a build short when the daemon stops."""


def relevant(rel: str, *, is_directory: bool) -> bool:
    """Whether a change at repository-relative `rel` can change the code index."""
    parts = rel.split("/")
    if not rel or rel.startswith("..") or parts[0] in IGNORED_TOP:
        return False
    if any(part in IGNORED_DIRS for part in parts[: -1 if not is_directory else None]):
        return False
    # Files the index never reads (swap files, build output, images) cannot change it;
    # `.gitignore` can, by showing or hiding untracked files, and `.gitattributes` by marking
    # files vendored (skipped) or generated (ranked lower).
    return (
        is_directory
        or parts[-1] == ".gitignore"
        or is_attributes_file(rel)
        or language_for(rel) is not None
    )


class _Events(FileSystemEventHandler):
    def __init__(self, link: CodeLink) -> None:
        self.link = link

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self.link.on_event(event)
        except Exception:  # an event must never kill the observer thread
            self.link.logger.exception("code index: failed to handle %s", event)


class CodeLink:
    """Service: the code index, a watcher on the work tree, and the thread that updates."""

    name = "code"

    def __init__(self, layout: RepoLayout, config: Config, logger: logging.Logger) -> None:
        self.logger = logger
        self.index = CodeIndex(layout, config)
        self.stats: DaemonStats | None = None  # set by Extensions.install: `nexusd status`
        self.state = "stopped"  # opening, building, ready, failed
        self.updates = 0
        self.last_update_at: str | None = None
        self.last_error: str | None = None
        self._root = os.fspath(layout.root)
        self._reasons: set[str] = set()
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._kicks = 0  # kicks so far …
        self._kicks_done = 0  # … and how many of them an ended update has taken in
        self._hurry = False  # a read waits: update without waiting for quiet
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: Any = None
        self._watches: dict[str, Any] = {}  # top-level folder → its recursive watch
        self._watch_lock = threading.Lock()
        self._handler = _Events(self)
        self._published = 0.0

    def start(self) -> None:
        """Return at once: the index is opened, built and watched in the background."""
        self._stop.clear()
        self.state = "opening"
        with self._lock:
            self._kicks += 1  # the first update: a read waits for it as for any other
            first = self._kicks
        self._thread = threading.Thread(target=self._run, args=(first,), name=THREAD, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching, cut a build short between files, and join the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(STOP_JOIN_SECONDS)
            if self._thread.is_alive():
                log_event(self.logger, logging.WARNING, "code index still updating at stop")
            self._thread = None
        # After the thread: it is the one that starts the observer.
        with self._watch_lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
        if observer is not None:
            observer.stop()
            observer.join(10)
        self.state = "stopped"

    def kick(self, reason: str) -> None:
        """Ask for an update (batched with whatever else arrives within QUIET_SECONDS)."""
        with self._lock:
            self._reasons.add(reason)
            self._kicks += 1
        self._wake.set()

    def handle(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Answer a code op from the daemon's socket (None for any other op); a read first
        waits (up to FRESH_WAIT_SECONDS) for files changed before it to be indexed."""
        fresh = request.get("op") not in READ_OPS or self.wait_fresh(FRESH_WAIT_SECONDS)
        answer = handle_code_op(self.index, request, update=self.update_now, extra=self.facts)
        # During the first build no change is behind: the index's own note says it is building.
        if not fresh and self.index.complete and answer is not None and answer.get("ok"):
            # Every read says so: search's note, symbols' note, impact's own note.
            holder = answer["impact"] if isinstance(answer.get("impact"), dict) else answer
            holder["note"] = "; ".join(filter(None, [holder.get("note"), STALE_NOTE]))
        return answer

    def wait_fresh(self, timeout: float) -> bool:
        """Whether every change reported so far is indexed, waiting up to `timeout` seconds
        (and asking the update not to wait for quiet)."""
        deadline = time.monotonic() + timeout
        with self._done:
            target = self._kicks
            if self._kicks_done >= target:
                return True
            self._hurry = True
            self._wake.set()
            while self._kicks_done < target:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set() or self._thread is None:
                    return False
                self._done.wait(left)
        return True

    def update_now(self, reset: bool = False) -> UpdateReport:
        """Update (or drop and rebuild) in the caller's thread; counted and logged."""
        if reset:
            self.index.reset()
        return self._update({"reindex" if reset else "request"})

    def facts(self) -> dict[str, Any]:
        """What the daemon adds to the index's status: its state and its updates."""
        return {
            "daemon": True,
            "state": self.state,
            "updates": self.updates,
            "last_update_at": self.last_update_at,
            "last_error": self.last_error,
            "watching": self.watching(),
        }

    def watching(self) -> list[str]:
        """The top-level folders watched recursively."""
        with self._watch_lock:
            return sorted(self._watches)

    # -- the owner thread -----------------------------------------------------------------
    def _run(self, first: int) -> None:
        try:
            self.index.open()
            # Watch before the first build: an edit made while it runs is picked up after.
            self._watch()
            self._update({"start"})
        except _Stopping:
            return
        except Exception as exc:
            self._failed("code index not opened", exc)
        finally:
            self._taken_in(first)
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.is_set():
                return
            self._settle()
            with self._lock:
                reasons, self._reasons = self._reasons, set()
                taken, self._hurry = self._kicks, False
            if self._stop.is_set():
                return
            try:
                if reasons:
                    self._update(reasons)
            except _Stopping:
                return
            except Exception as exc:
                self._failed("code index update failed", exc)
            finally:
                self._taken_in(taken)

    def _taken_in(self, kicks: int) -> None:
        """The first `kicks` kicks are indexed (or failed: a reader waits for an attempt)."""
        with self._done:
            self._kicks_done = max(self._kicks_done, kicks)
            self._done.notify_all()

    def _settle(self) -> None:
        """Wait until events stop for QUIET_SECONDS (at most MAX_BATCH_SECONDS)."""
        deadline = time.monotonic() + MAX_BATCH_SECONDS
        while not self._stop.is_set() and time.monotonic() < deadline and not self._hurry:
            self._wake.clear()
            if not self._wake.wait(QUIET_SECONDS):
                return

    def _update(self, reasons: set[str]) -> UpdateReport:
        self.state = "building" if not self.index.complete else "updating"
        self._publish(force=True)
        report = self.index.update(progress=self._progress)
        with self._lock:
            self.updates += 1
            self.last_update_at = utc_now()
        self.state = "ready"
        self.last_error = None
        log_event(
            self.logger,
            logging.INFO,
            "code index updated",
            reasons=sorted(reasons),
            **asdict(report),
        )
        self._publish(force=True)
        return report

    def _progress(self, done: int, total: int) -> None:
        if self._stop.is_set():
            raise _Stopping  # between two chunks: what is stored so far stays valid
        self._publish()

    def _failed(self, what: str, exc: BaseException) -> None:
        self.state = "failed"
        self.last_error = f"{type(exc).__name__}: {exc}"
        log_event(self.logger, logging.ERROR, what, error=self.last_error, exc_info=True)
        self._publish(force=True)

    def _publish(self, *, force: bool = False) -> None:
        """Copy a summary into the daemon's status (throttled while a build runs)."""
        now = time.monotonic()
        if self.stats is None or (not force and now - self._published < PUBLISH_SECONDS):
            return
        self._published = now
        with contextlib.suppress(Exception):  # a status line is never worth an update
            self.stats.set(code=status_summary(status_of(self.index, self.facts)))

    # -- watching -------------------------------------------------------------------------
    def _watch(self) -> None:
        """The top of the repository, and each top-level folder but IGNORED_TOP recursively
        (so `.git/` and a top-level `node_modules/` cost no inotify watches at all)."""
        observer = Observer()
        observer.schedule(self._handler, self._root, recursive=False, event_filter=_EVENTS)
        observer.start()
        with self._watch_lock:
            self._observer = observer
        with os.scandir(self._root) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    self._watch_folder(entry.name)

    def _watch_folder(self, name: str) -> None:
        """Watch a top-level folder recursively (again, if it was deleted and recreated).

        watchdog calls `on_event` holding its observer's lock, and `schedule` takes that
        lock: so `_watch_lock` is never held while calling the observer, or a folder made
        while another is being watched deadlocks the two threads."""
        if name in IGNORED_TOP or name in IGNORED_DIRS:
            return
        with self._watch_lock:
            observer = self._observer
            old = self._watches.pop(name, None)
        if observer is None:
            return
        self._unschedule(observer, old)
        path = str(Path(self._root, name))
        try:
            watch = observer.schedule(self._handler, path, recursive=True, event_filter=_EVENTS)
        except OSError as exc:  # e.g. out of inotify watches: the git hooks still work
            log_event(
                self.logger, logging.WARNING, "code index cannot watch", path=path, error=str(exc)
            )
            return
        with self._watch_lock:
            # Another thread watched it meanwhile: keep one watch.
            extra = watch if name in self._watches or self._observer is None else None
            if extra is None:
                self._watches[name] = watch
        self._unschedule(observer, extra)

    def _unwatch(self, name: str) -> None:
        with self._watch_lock:
            observer, old = self._observer, self._watches.pop(name, None)
        self._unschedule(observer, old)

    @staticmethod
    def _unschedule(observer: Any, watch: Any) -> None:
        if watch is not None and observer is not None:
            # KeyError: its emitter already went away with the folder.
            with contextlib.suppress(KeyError):
                observer.unschedule(watch)

    def on_event(self, event: FileSystemEvent) -> None:
        """One watchdog event: a top-level folder (re)watched; a relevant change kicks."""
        kicked = False
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw)
            if not path.startswith(self._root + os.sep):
                continue
            rel = path[len(self._root) + 1 :].replace(os.sep, "/")
            if event.is_directory and "/" not in rel:
                if Path(path).is_dir() and not Path(path).is_symlink():
                    self._watch_folder(rel)
                else:
                    self._unwatch(rel)
            if not kicked and relevant(rel, is_directory=event.is_directory):
                self.kick("watch")
                kicked = True
