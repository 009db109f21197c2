"""What the daemon did, shared by its threads and published to `<nexus>/state/status.json`.

`DaemonStats` is the one mutable record (guarded by a lock); `StatusWriter`
writes it atomically whenever it changed, at most a few times a second, so
`nexusd status` can read the figures even after the daemon has stopped.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nexusd import __version__
from nexusd.atomic import atomic_write_text
from nexusd.daemon.logs import printable_data

STATUS_FILE = "status.json"


def utc_now() -> str:
    """The current time as ISO 8601 UTC (seconds)."""
    return datetime.now(tz=UTC).isoformat(timespec="seconds")


class DaemonStats:
    """Counters and facts about one daemon run; every method is thread-safe."""

    def __init__(self, pid: int) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._data: dict[str, Any] = {
            "version": __version__,
            "pid": pid,
            "state": "starting",
            "started_at": utc_now(),
            "ready_at": None,
            "stopped_at": None,
            "answered": 0,
            "skipped": 0,
            "errors": 0,
            "failures": 0,
            "unchanged": 0,
            "dropped": 0,
            "queued": 0,
            "in_flight": None,
            "rescans": 0,
            "watched": [],
            "pending_watch": [],
            "last_answered": None,
            "last_error": None,
            "code": None,  # the code index's summary (nexusd.code.ops.status_summary)
            # Why the configuration files were not (all) applied by a reload, else None.
            "config_error": None,
            "config_reloaded_at": None,
            # Since when a reload restarts the services (the state stays `running`), else None.
            "reloading": None,
        }
        # The requests counted in `dropped`: each once for as long as these figures live (a
        # reload's new run and queue go on with them); one whose file is gone is let go.
        self._dropped: set[Path] = set()

    def set(self, **values: Any) -> None:
        """Replace fields (e.g. `state="running"`); only a real change wakes the writer."""
        with self._lock:
            changed = any(self._data.get(k) != v for k, v in values.items())
            self._data.update(values)
        if changed or not values:
            self._changed.set()

    def add(self, key: str, amount: int = 1) -> None:
        """Increment a counter."""
        with self._lock:
            self._data[key] = int(self._data[key]) + amount
        self._changed.set()

    def count_dropped(self, path: Path) -> None:
        """Count `path` in `dropped` (the queue was full), unless it was counted already."""
        with self._lock:
            if path in self._dropped:
                return
            self._dropped.add(path)
            self._data["dropped"] = int(self._data["dropped"]) + 1
        self._changed.set()

    def forget_dropped(self, gone: Callable[[Path], bool]) -> None:
        """Let go of the counted paths that are `gone` (the count stays)."""
        with self._lock:
            paths = list(self._dropped)
        stale = {path for path in paths if gone(path)}
        with self._lock:
            self._dropped -= stale

    def record_error(self, path: Path | None, message: str) -> None:
        """Remember the most recent error so `nexusd status` shows it."""
        with self._lock:
            self._data["last_error"] = {
                "at": utc_now(),
                "path": str(path) if path else None,
                "message": message,
            }
        self._changed.set()

    def snapshot(self) -> dict[str, Any]:
        """A copy of the current figures."""
        with self._lock:
            return json.loads(json.dumps(self._data, default=str))  # type: ignore[no-any-return]

    def wait_changed(self, timeout: float) -> bool:
        """Block until a field changed (or `timeout`); clears the flag."""
        changed = self._changed.wait(timeout)
        self._changed.clear()
        return changed


def status_path(state_dir: Path) -> Path:
    """Where the status file lives."""
    return state_dir / STATUS_FILE


def write_status(state_dir: Path, stats: DaemonStats) -> None:
    """Publish a snapshot atomically."""
    # Printable: a path that is not UTF-8 (a request's odd name) must not stop the status.
    data = printable_data(stats.snapshot())
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_text(status_path(state_dir), text)


def read_status(state_dir: Path) -> dict[str, Any] | None:
    """The last published snapshot, or None when there is none (or it is unreadable)."""
    try:
        data = json.loads(status_path(state_dir).read_text(encoding="utf-8"))
    except (FileNotFoundError, OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    # A hand-edited file's lists of folders may be anything: shown as none, never a crash.
    for key in ("watched", "pending_watch"):
        value = data.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            del data[key]
    return data


class StatusWriter:
    """A thread that republishes the status file when the figures change."""

    name = "status-writer"

    def __init__(self, state_dir: Path, stats: DaemonStats, *, min_interval: float = 0.2) -> None:
        self.state_dir = state_dir
        self.stats = stats
        self.min_interval = min_interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Write once now, then whenever something changes."""
        write_status(self.state_dir, self.stats)
        self._thread = threading.Thread(target=self._run, name="nexusd-status", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread after a final write."""
        self._stop.set()
        self.stats.set()  # wake the thread
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        write_status(self.state_dir, self.stats)

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.stats.wait_changed(timeout=1.0) and not self._stop.is_set():
                # OSError: disk full or state dir removed; ValueError: a value JSON cannot
                # hold. The next change retries; the thread never dies of one bad write.
                with contextlib.suppress(OSError, ValueError):
                    write_status(self.state_dir, self.stats)
                self._stop.wait(self.min_interval)
