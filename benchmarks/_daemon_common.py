"""Helpers shared by the benchmarks that start a real daemon: commands, a demo repository
with memory, and waiting until the daemon's start-up work is done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexusd.memory.client import ask  # noqa: E402
from nexusd.paths import find_repo  # noqa: E402


def own_git_config(base: Path) -> None:
    """Point git at a config of its own under `base` (an identity for commits, nothing from
    the machine's global or system config), for this process and the ones it starts."""
    cfg = base / "gitconfig"
    cfg.write_text("[user]\n\tname = bench\n\temail = bench@localhost\n")
    os.environ["GIT_CONFIG_GLOBAL"] = str(cfg)
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"


def run(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run a command in `root`; its stdout (raises on failure)."""
    proc = subprocess.run(args, cwd=root, check=True, capture_output=True, text=True, env=env)
    return proc.stdout


def nexusd(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run `nexusd ARGS` from this checkout in `root`; its stdout."""
    return run(root, sys.executable, "-P", "-m", "nexusd", *args, env=env)


def make_memory_repo(base: Path, name: str) -> Path:
    """A small repository: 50 modules, 40 lessons in MEMORY.md, a daily note; `nexusd init`."""
    root = base / name
    root.mkdir()
    run(root, "git", "init", "-q", "-b", "main")
    for i in range(50):
        (root / f"mod{i:02d}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    nexusd(root, "init")
    lessons = "\n".join(f"- lesson {i}: keep the fixture {i} warm" for i in range(40))
    (root / "MEMORY.md").write_text(f"# Memory\n\n## Lessons\n\n{lessons}\n")
    daily = root / "memory" / "daily" / "2026-01-01.md"
    daily.parent.mkdir(parents=True, exist_ok=True)
    daily.write_text(f"# 2026-01-01\n\n- started the {name} benchmark\n")
    run(root, "git", "add", "-A")
    run(root, "git", "commit", "-qm", "init")
    return root


def wait_ready(root: Path, timeout: float) -> dict[str, object]:
    """Until the model is loaded (or known unavailable) and the code index is complete;
    the daemon's `ping` answer."""
    layout = find_repo(root)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ping = ask(layout.socket_path, {"op": "ping"}) if layout.socket_path.exists() else None
        status = json.loads(nexusd(root, "status", "--json"))
        code = status.get("code") or {}
        if ping and ping.get("status") in ("ready", "unavailable") and code.get("complete"):
            return ping
        time.sleep(0.5)
    raise SystemExit(f"the daemon did not finish its start-up work within {timeout:.0f} s")
