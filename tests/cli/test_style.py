"""Colour on a terminal, none in a pipe or with NO_COLOR: real processes on a real pty."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from daemon.helpers import nexusd_env

ARGS = [sys.executable, "-m", "nexusd", "plan", "missing_plan_request.md"]


def _stderr_on_a_terminal(repo: Path, **env: str) -> str:
    base = {k: v for k, v in nexusd_env().items() if k != "NO_COLOR"}
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            ARGS, cwd=repo, env={**base, **env}, stderr=slave, stdout=subprocess.DEVNULL,
            check=False, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 10  # the request file does not exist: refused
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    return b"".join(chunks).decode()


def test_errors_are_coloured_on_a_terminal(repo: Path) -> None:
    text = _stderr_on_a_terminal(repo, TERM="xterm")
    assert "\x1b[" in text and "error:" in text


def test_no_colour_with_no_color_set(repo: Path) -> None:
    text = _stderr_on_a_terminal(repo, TERM="xterm", NO_COLOR="1")
    assert "error:" in text and "\x1b[" not in text


def test_no_colour_in_a_pipe(repo: Path) -> None:
    proc = subprocess.run(
        ARGS, cwd=repo, env={**nexusd_env(), "TERM": "xterm"}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert "error:" in proc.stderr and "\x1b[" not in proc.stderr
