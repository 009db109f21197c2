"""Helpers for tests that run real daemon processes through the CLI."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def nexusd_env() -> dict[str, str]:
    """The test's environment, with this checkout importable in child processes."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    return env


def nexusd(
    repo: Path, *args: str, timeout: float = 90.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `python -P -m nexusd ARGS` in `repo` as a real subprocess (-P: like the `nexusd`
    console script, the working directory is not on the import path)."""
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "nexusd", *args],
        cwd=repo,
        env=nexusd_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check:
        assert proc.returncode == 0, (
            f"nexusd {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def wait_until(condition: Callable[[], T], *, timeout: float = 30.0, what: str = "condition") -> T:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def request_text(goal: str, cycle: int = 1) -> str:
    """A canonical front-matter request."""
    return f"---\ncycle: {cycle}\ngoal: {goal}\n---\n\nPlease plan this.\n"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def response_for(request: Path) -> Path:
    """`X_plan_request.md` -> `X_plan_response.md`."""
    return request.with_name(request.name.replace("_plan_request.md", "_plan_response.md"))


def front_matter(path: Path) -> dict[str, Any]:
    """The YAML front matter of a response file (empty when absent or partial)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return {}
    if not text.startswith("---\n"):
        return {}
    head, sep, _ = text[4:].partition("\n---")
    if not sep:
        return {}
    loaded = yaml.safe_load(head)
    return loaded if isinstance(loaded, dict) else {}


def answered_meta(request: Path) -> dict[str, Any]:
    """The response's front matter if it answers the request's current content, else {}."""
    meta = front_matter(response_for(request))
    if meta and meta.get("request_sha256") == sha256_of(request):
        return meta
    return {}


def wait_answered(request: Path, *, timeout: float = 30.0) -> dict[str, Any]:
    """Wait for a response answering the request's current content; its front matter."""
    return wait_until(
        lambda: answered_meta(request), timeout=timeout, what=f"a response to {request.name}"
    )


def response_files(folder: Path) -> list[Path]:
    """Every response file in `folder` (not temp files)."""
    return sorted(p for p in folder.glob("*_plan_response.md") if not p.name.startswith("."))


def daemon_pid(repo: Path) -> int | None:
    """The pid in the working tree's pid file (a linked worktree's is under its git dir)."""
    git_file = repo / ".git"
    pidfile = git_file / "nexus" / "nexusd.pid"
    if git_file.is_file():
        from nexusd.paths import find_repo

        pidfile = find_repo(repo).pidfile
    try:
        return int(pidfile.read_text(encoding="utf-8").strip())
    except (FileNotFoundError, ValueError):
        return None


def pid_gone(pid: int) -> bool:
    """True when no live (non-zombie) process has this pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def force_stop(repo: Path) -> None:
    """Teardown: stop the daemon gracefully, or kill it; never leaves a process behind."""
    pid = daemon_pid(repo)
    with contextlib.suppress(subprocess.TimeoutExpired, AssertionError):
        nexusd(repo, "stop", "--timeout", "20", check=False, timeout=40)
    if pid is not None and not pid_gone(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: pid_gone(pid), timeout=10, what=f"pid {pid} to die")


def write_config(repo: Path, text: str) -> None:
    """Write `.nexus/config.yaml` in `repo`."""
    (repo / ".nexus").mkdir(exist_ok=True)
    (repo / ".nexus" / "config.yaml").write_text(text, encoding="utf-8")


@pytest.fixture
def served(repo: Path) -> Path:
    """A real git repository with `.scratchpad_logs/` (what `nexusd init` makes)."""
    (repo / ".scratchpad_logs").mkdir()
    return repo


@pytest.fixture
def start_daemon() -> Iterator[Callable[..., Path]]:
    """`start_daemon(repo)` runs `nexusd start`; every daemon is stopped at teardown."""
    started: list[Path] = []

    def start(repo: Path, *extra: str) -> Path:
        started.append(repo)
        nexusd(repo, "start", *extra)
        return repo

    yield start
    for repo in started:
        force_stop(repo)


@pytest.fixture
def daemon(served: Path, start_daemon: Callable[..., Path]) -> Path:
    """A repository with a running daemon (stopped at teardown, even on failure)."""
    return start_daemon(served)


@pytest.fixture(autouse=True)
def daemon_without_memory(_isolated_home: Path) -> None:
    """Daemon behaviour tests run without the memory index (no model load per daemon);
    tests/daemon/test_extensions.py turns it back on in the repository's own config."""
    user_config = _isolated_home / ".config" / "nexusd" / "config.yaml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text("memory:\n  enabled: false\n", encoding="utf-8")


def published(repo: Path) -> dict[str, Any]:
    """What the daemon itself published in status.json (not the CLI's own look at it)."""
    try:
        data = json.loads((repo / ".git" / "nexus" / "state" / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
