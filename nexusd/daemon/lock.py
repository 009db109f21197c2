"""One daemon per repository: an flock held for the daemon's life, and its pid file.

The lock is the truth about "running"; the pid file only says which process
holds it. A daemon killed with -9 leaves a stale pid file but no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

from nexusd.atomic import atomic_write_text
from nexusd.errors import DaemonError
from nexusd.paths import RepoLayout


class DaemonLock:
    """An exclusive `flock` on `<nexus>/nexusd.lock`, released when the process exits."""

    def __init__(self, lockfile: Path, pidfile: Path) -> None:
        self.path = lockfile
        self.pidfile = pidfile
        self._fd: int | None = None

    def acquire(self, *, wait_seconds: float = 1.0) -> None:
        """Take the lock, retrying briefly (a `status` probe may hold it for microseconds)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    pid = read_pid(self.pidfile)
                    who = f" (pid {pid})" if pid else ""
                    raise DaemonError(
                        f"nexusd is already running for this repository{who}",
                        hint="use `nexusd status`, or `nexusd stop` first",
                    ) from None
                time.sleep(0.02)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases the flock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lock_is_held(lockfile: Path) -> bool:
    """True when some process holds the daemon lock (probed with a shared, non-blocking flock)."""
    try:
        fd = os.open(lockfile, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the shared lock if we got it
    return False


def read_pid(pidfile: Path) -> int | None:
    """The pid recorded in the pid file, or None when absent or unreadable."""
    try:
        text = pidfile.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, OSError):
        return None
    return int(text) if text.isdigit() else None


def write_pid(pidfile: Path, pid: int) -> None:
    """Record `pid` atomically."""
    atomic_write_text(pidfile, f"{pid}\n")


def remove_pid(pidfile: Path, pid: int) -> None:
    """Remove the pid file if it still names `pid`."""
    if read_pid(pidfile) == pid:
        with contextlib.suppress(FileNotFoundError):
            pidfile.unlink()


def running_pid(layout: RepoLayout) -> int | None:
    """The running daemon's pid (0 if it has not written it yet), or None when none runs."""
    if not lock_is_held(layout.lockfile):
        return None
    # The daemon writes its pid file right after taking the lock; give it a moment.
    deadline = time.monotonic() + 1.0
    pid = read_pid(layout.pidfile)
    while pid is None and time.monotonic() < deadline:
        time.sleep(0.02)
        pid = read_pid(layout.pidfile)
    return pid if pid is not None else 0
