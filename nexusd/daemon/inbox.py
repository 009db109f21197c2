"""The hook inbox: events git hooks queue for the daemon, drained exactly once.

Format: each hook run writes one JSON line to its own new file
`<git-common-dir>/nexus/inbox/<hook>.<pid>.<n>.jsonl`, created with O_EXCL by a
tiny POSIX sh script (no Python startup, so `git commit` stays fast). Any
producer may append more lines to a `*.jsonl` file; a file counts once its
last byte is a newline. A line looks like:

    {"v":1,"hook":"post-commit","args":[],"head":"<sha>","worktree":"/path"}

Every worktree of a repository shares the hooks and so this inbox, but each event
belongs to the daemon of the worktree it came from (its `worktree` field; without
one, the main checkout's). A daemon claims only files holding its own events and
leaves the rest for their daemon, which handles them when it next drains, even one
started later. Events of a worktree that no longer exists are dropped by the main
checkout's daemon, so they do not pile up.

Draining claims files by renaming them into `inbox/claimed/` (atomic), handles
their events, then deletes them. A claimed file that is still there on the next
drain (the process died in between) is processed again, so nothing is lost;
events whose handler raises are logged and moved to `inbox/dead/`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from nexusd.atomic import atomic_write_text
from nexusd.config import Config
from nexusd.daemon.event_owner import EventOwner
from nexusd.paths import RepoLayout

if TYPE_CHECKING:
    from nexusd.checkpoint.model import Checkpoint

log = logging.getLogger(__name__)

# A file left incomplete (no final newline) for this long was abandoned by a dead writer.
STALE_PARTIAL_SECONDS = 60.0

Handler = Callable[[RepoLayout, Config, "InboxEvent"], object]


@dataclass(frozen=True)
class InboxEvent:
    """One queued hook event."""

    hook: str
    args: tuple[str, ...] = ()
    head: str | None = None
    worktree: str | None = None
    time: datetime | None = None
    source: Path | None = field(default=None, compare=False)
    raw: str = field(default="", compare=False)

    def to_json(self) -> str:
        """The event as one JSON line (without the newline)."""
        data: dict[str, Any] = {"v": 1, "hook": self.hook, "args": list(self.args)}
        if self.head:
            data["head"] = self.head
        if self.worktree:
            data["worktree"] = self.worktree
        if self.time:
            data["time"] = self.time.isoformat()
        return json.dumps(data, ensure_ascii=False, sort_keys=True)


def parse_line(line: str, *, source: Path | None = None, mtime: float = 0.0) -> InboxEvent:
    """Parse one inbox line; raises ValueError when it is not an event."""
    data = json.loads(line)
    if not isinstance(data, dict) or not isinstance(data.get("hook"), str):
        raise ValueError("an inbox line must be a JSON object with a `hook`")
    args = data.get("args") or []
    when = data.get("time")
    parsed_time = (
        datetime.fromisoformat(when)
        if isinstance(when, str)
        else datetime.fromtimestamp(mtime, UTC)
        if mtime
        else None
    )
    return InboxEvent(
        hook=data["hook"],
        args=tuple(str(a) for a in args) if isinstance(args, list) else (),
        head=str(data["head"]) if data.get("head") else None,
        worktree=str(data["worktree"]) if data.get("worktree") else None,
        time=parsed_time,
        source=source,
        raw=line,
    )


def enqueue(layout: RepoLayout, event: InboxEvent) -> Path:
    """Queue an event from Python (the hooks do the same in sh)."""
    layout.inbox_dir.mkdir(parents=True, exist_ok=True)
    name = f"{event.hook}.{os.getpid()}.{time.time_ns()}.jsonl"
    path = layout.inbox_dir / name
    atomic_write_text(path, event.to_json() + "\n")
    return path


def _claimed_dir(layout: RepoLayout) -> Path:
    return layout.inbox_dir / "claimed"


def _dead_dir(layout: RepoLayout) -> Path:
    return layout.inbox_dir / "dead"


def _is_complete(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except OSError:
        return False


def _sort_key(path: Path) -> tuple[int, str]:
    try:
        return (path.stat().st_mtime_ns, path.name)
    except OSError:
        return (0, path.name)


def claim(layout: RepoLayout, wanted: Callable[[Path], bool] | None = None) -> list[Path]:
    """Claim complete files that are `wanted` (default: all); return all claimed, oldest first."""
    inbox = layout.inbox_dir
    claimed = _claimed_dir(layout)
    if not inbox.is_dir():
        return []
    claimed.mkdir(exist_ok=True)
    # Files already in claimed/ were claimed by a run that died: they go first.
    previous = sorted(claimed.glob("*.jsonl"), key=_sort_key)
    fresh: list[Path] = []
    for path in sorted(inbox.glob("*.jsonl"), key=_sort_key):
        if not _is_complete(path):
            age = time.time() - _sort_key(path)[0] / 1e9
            if age > STALE_PARTIAL_SECONDS:
                # Its writer died mid-line long ago: keep what is there as a dead letter.
                with contextlib.suppress(OSError):
                    text = path.read_text("utf-8", "replace")
                    if text:
                        _bury(layout, text, "incomplete line", path.name)
                    path.unlink()
            continue
        if wanted is not None and not wanted(path):
            continue
        target = claimed / path.name
        with contextlib.suppress(FileNotFoundError):
            path.replace(target)
            fresh.append(target)
    return previous + fresh


def read_events(path: Path) -> list[InboxEvent]:
    """The events of one claimed file; unparsable lines go to the dead-letter folder."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return []
    events: list[InboxEvent] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            events.append(parse_line(line, source=path, mtime=mtime))
        except ValueError as exc:
            log.warning("inbox: unreadable line in %s: %s", path.name, exc)
            _bury_line(path, line, f"unreadable: {exc}")
    return events


def _bury_line(source: Path, line: str, error: str) -> None:
    dead = source.parent.parent / "dead"
    _write_dead(dead, line, error, source.name)


def _bury(layout: RepoLayout, line: str, error: str, name: str) -> None:
    _write_dead(_dead_dir(layout), line, error, name)


def _write_dead(dead: Path, line: str, error: str, name: str) -> None:
    record = {
        "failed_at": datetime.now(UTC).isoformat(),
        "error": error,
        "event": line.rstrip("\n"),
        "source": name,
    }
    target = dead / f"{time.time_ns()}.{os.getpid()}.json"
    atomic_write_text(target, json.dumps(record, ensure_ascii=False) + "\n")


def _event_layout(layout: RepoLayout, event: InboxEvent) -> RepoLayout:
    """The worktree an event came from (a linked worktree of the same repository)."""
    if event.worktree and Path(event.worktree).resolve() != layout.root.resolve():
        from nexusd.paths import find_repo

        with contextlib.suppress(Exception):
            other = find_repo(Path(event.worktree))
            if other.git_common_dir.resolve() == layout.git_common_dir.resolve():
                return other
    return layout


def checkpoint_on_commit(
    layout: RepoLayout, config: Config, event: InboxEvent
) -> Checkpoint | None:
    """post-commit: snapshot the working tree with reason `commit` (`checkpoint.on_commit`)."""
    from nexusd.checkpoint.snapshot import create_checkpoint

    if not config.checkpoint.on_commit:
        return None

    trailers = {"Nexus-Commit": event.head} if event.head else {}
    return create_checkpoint(
        _event_layout(layout, event),
        reason="commit",
        trailers=trailers,
        max_untracked_bytes=config.checkpoint.max_untracked_file_bytes,
    )


# hook name -> handler without a daemon's services. Read-only: a daemon run drains with its
# own table (`Extensions.handlers`), built afresh at each (re)start, so a reload that turned
# memory or the code index off leaves no handler feeding the services of the old
# configuration. Events of a hook with no handler are acknowledged.
DEFAULT_HANDLERS: Mapping[str, Handler] = MappingProxyType({"post-commit": checkpoint_on_commit})

# Several queued events of these hooks collapse into the newest one per worktree: ten
# commits made while the daemon was down need one checkpoint of the tree, not ten.
COALESCE = frozenset({"post-commit", "post-merge", "post-checkout"})

_lock = threading.Lock()


@contextlib.contextmanager
def _drain_lock(layout: RepoLayout) -> Iterator[None]:
    layout.inbox_dir.mkdir(parents=True, exist_ok=True)
    # Outside inbox/: closing the lock file must not look like a new event to the watcher.
    with _lock, layout.inbox_lock.open("a") as fh:
        # Between processes (daemon and a foreground `nexusd` command) as well as threads.
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _wants(owner: EventOwner, path: Path) -> bool:
    """Claim a file when any of its lines is this daemon's (or unreadable: buried)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        try:
            if owner.owns(parse_line(line).worktree):
                return True
        except ValueError:
            return True
    return not lines  # a blank file is nobody's event: claimed and deleted


def drain_and_handle(
    layout: RepoLayout, config: Config, handlers: Mapping[str, Handler] = DEFAULT_HANDLERS
) -> int:
    """Drain this worktree's events and run each one's handler; return how many were handled."""
    table = handlers
    owner = EventOwner(layout)
    with _drain_lock(layout):
        files: list[tuple[Path, list[InboxEvent]]] = []
        for path in claim(layout, lambda p: _wants(owner, p)):
            events = read_events(path)
            mine = [e for e in events if owner.owns(e.worktree)]
            others = [e for e in events if not owner.owns(e.worktree)]
            if others:
                # Back into the inbox for their own daemon; a crash before the claimed file
                # is deleted at worst queues them twice (handling is at least once anyway).
                target = layout.inbox_dir / f"requeue.{os.getpid()}.{time.time_ns()}.jsonl"
                atomic_write_text(target, "".join(e.raw + "\n" for e in others))
                # Its age, so the events keep their place among that worktree's later ones.
                with contextlib.suppress(OSError):
                    stat = path.stat()
                    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            files.append((path, mine))
        newest: dict[tuple[str, str | None], InboxEvent] = {}
        for _path, events in files:
            for event in events:
                if event.hook in COALESCE:
                    newest[(event.hook, event.worktree)] = event
        handled = 0
        for path, events in files:
            for event in events:
                if not owner.is_own(event.worktree):
                    # Owned only because its worktree was removed: nothing left to handle.
                    log.info(
                        "inbox: %s event of removed worktree %s dropped", event.hook, event.worktree
                    )
                    handled += 1
                    continue
                handled += _handle(layout, config, event, newest, table)
            # Acknowledged file by file: a crash re-processes at most the file in hand.
            path.unlink(missing_ok=True)
        return handled


def _handle(
    layout: RepoLayout,
    config: Config,
    event: InboxEvent,
    newest: dict[tuple[str, str | None], InboxEvent],
    handlers: Mapping[str, Handler],
) -> int:
    if event.hook in COALESCE and newest[(event.hook, event.worktree)] is not event:
        return 1
    handler = handlers.get(event.hook)
    if handler is None:
        log.info("inbox: no handler for %s events yet; acknowledged", event.hook)
        return 1
    try:
        handler(layout, config, event)
    except Exception as exc:
        log.exception("inbox: handling %s failed; kept in inbox/dead/", event.hook)
        if event.source is not None:
            _bury_line(event.source, event.raw, f"{type(exc).__name__}: {exc}")
        return 0
    return 1
