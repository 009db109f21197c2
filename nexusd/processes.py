"""Processes, handled the same way everywhere: whether one is still there (the daemon's
lock, the sandbox's container sweep, the code index's parser workers), and ending a whole
process group (checks, command providers, `nexusd solve`'s attempts)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (started with `start_new_session`); gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True  # no /proc (macOS): trust kill(0)
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
