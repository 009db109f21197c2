"""One daemon per repository: the flock and the pid file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nexusd.daemon.lock import (
    DaemonLock,
    lock_is_held,
    read_pid,
    remove_pid,
    running_pid,
    write_pid,
)
from nexusd.errors import DaemonError
from nexusd.paths import find_repo


def test_second_lock_is_refused_naming_the_pid(tmp_path: Path) -> None:
    first = DaemonLock(tmp_path / "nexusd.lock", tmp_path / "nexusd.pid")
    first.acquire()
    write_pid(tmp_path / "nexusd.pid", 4242)
    try:
        assert lock_is_held(tmp_path / "nexusd.lock")
        second = DaemonLock(tmp_path / "nexusd.lock", tmp_path / "nexusd.pid")
        with pytest.raises(DaemonError, match=r"already running.*pid 4242") as info:
            second.acquire(wait_seconds=0.1)
        assert info.value.exit_code == 7
    finally:
        first.release()
    assert not lock_is_held(tmp_path / "nexusd.lock")


def test_lock_held_by_another_process_is_seen(tmp_path: Path) -> None:
    lockfile = tmp_path / "nexusd.lock"
    code = (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
        "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(lockfile)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert lock_is_held(lockfile)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert not lock_is_held(lockfile)  # the kernel released it with the process


def test_pid_file_round_trip_and_guarded_removal(tmp_path: Path) -> None:
    pidfile = tmp_path / "nexusd.pid"
    assert read_pid(pidfile) is None
    write_pid(pidfile, 123)
    assert read_pid(pidfile) == 123
    remove_pid(pidfile, 999)  # not ours: kept
    assert pidfile.exists()
    remove_pid(pidfile, 123)
    assert not pidfile.exists()


def test_running_pid_is_none_without_a_daemon(repo: Path) -> None:
    layout = find_repo(repo)
    write_pid(layout.pidfile, 99999)  # stale: left by a daemon killed with -9
    assert running_pid(layout) is None
