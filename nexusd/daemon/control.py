"""Controlling a repository's daemon from another process: start detached, stop, describe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

from nexusd.daemon.lock import lock_is_held, running_pid
from nexusd.daemon.logs import render_line, tail_lines
from nexusd.daemon.status import read_status
from nexusd.errors import DaemonError
from nexusd.paths import RepoLayout
from nexusd.processes import pid_alive

OUT_FILE = "daemon.out"  # the detached daemon's stdout/stderr: crashes before logging starts


def daemon_command(layout: RepoLayout) -> list[str]:
    """The command line of the daemon process (what service managers run, too)."""
    return [sys.executable, "-P", "-m", "nexusd", "start", "--foreground", "-C", str(layout.root)]


def start_detached(layout: RepoLayout, *, timeout: float) -> tuple[int, bool]:
    """Start the daemon in its own session; returns (pid, started_now) once it is ready.

    When a daemon already runs, returns its pid with started_now False.
    """
    existing = running_pid(layout)
    if existing is not None:
        return existing, False
    layout.logs_dir.mkdir(parents=True, exist_ok=True)
    out_path = layout.logs_dir / OUT_FILE
    with out_path.open("ab") as out:
        proc = subprocess.Popen(
            [*daemon_command(layout), "--detached-child"],
            cwd=layout.root,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = read_status(layout.state_dir)
        if status and status.get("pid") == proc.pid and status.get("state") == "running":
            return proc.pid, True
        code = proc.poll()
        if code is not None:
            other = running_pid(layout)
            if other is not None:
                return other, False  # another `start` won the race
            raise DaemonError(
                f"the daemon exited during startup (exit code {code})" + _log_tail(layout),
                hint="fix the error above, then run `nexusd start` again",
            )
        time.sleep(0.05)
    proc.terminate()
    raise DaemonError(
        f"the daemon did not become ready within {timeout:g} s" + _log_tail(layout),
        hint="see `nexusd logs`; raise --timeout on a slow machine",
    )


def stop_daemon(layout: RepoLayout, *, timeout: float) -> int | None:
    """Ask the daemon to stop (SIGTERM) and wait until it exited; its pid, or None if none ran."""
    pid = running_pid(layout)
    if pid is None:
        return None
    if pid <= 0:
        raise DaemonError(
            "the daemon holds its lock but wrote no pid file", hint="retry in a second"
        )
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return pid
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid) and not lock_is_held(layout.lockfile):
            return pid
        time.sleep(0.05)
    raise DaemonError(
        f"the daemon (pid {pid}) did not stop within {timeout:g} s",
        hint=f"it may be finishing a long request; wait, or force it with `kill -9 {pid}`",
    )


def describe(layout: RepoLayout) -> dict[str, Any]:
    """The last published status plus `running` and `uptime_seconds` (None when stopped)."""
    data: dict[str, Any] = dict(read_status(layout.state_dir) or {})
    pid = running_pid(layout)
    data["running"] = pid is not None
    if pid is not None:
        data["pid"] = pid
    data["uptime_seconds"] = None
    started = data.get("started_at")
    if pid is not None and isinstance(started, str):
        try:
            since = datetime.fromisoformat(started)
            data["uptime_seconds"] = int((datetime.now(tz=UTC) - since).total_seconds())
        except ValueError:
            pass
    if pid is None and data.get("state") in {"starting", "running", "stopping"}:
        data["state"] = "crashed"  # it never wrote "stopped": killed (-9) or crashed
    data.setdefault("state", "never started")
    data["log_file"] = str(layout.log_file)
    from nexusd.sandbox.record import read_choice

    data["sandbox"] = read_choice(layout)  # the last check run's backend (and any fallback)
    return data


def _log_tail(layout: RepoLayout, lines: int = 15) -> str:
    tail = [render_line(line, as_json=False) for line in tail_lines(layout.log_file, lines)]
    out_path = layout.logs_dir / OUT_FILE
    if out_path.is_file():
        tail += tail_lines(out_path, lines)
    if not tail:
        return ""
    return "\n  last log lines:\n    " + "\n    ".join(tail[-lines:])
