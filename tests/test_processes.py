"""Whether a process is still there."""

from __future__ import annotations

import os
import subprocess
import sys

from nexusd.processes import pid_alive


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    assert not pid_alive(proc.pid)


def test_a_zombie_is_not_alive() -> None:
    """A child that exited but was not reaped yet counts as gone."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, still unreaped
        assert not pid_alive(proc.pid)
    finally:
        proc.wait(timeout=30)
