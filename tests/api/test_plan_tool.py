"""MCP `request_plan` through `nexusd mcp` with no daemon (real subprocess, SDK client): the
time box holds while the plan is made in the server's own process."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from api.conftest import error_text, result_json, run_mcp

pytestmark = pytest.mark.slow


def test_request_plan_without_a_daemon_keeps_its_time_box(memory_repo: Path) -> None:
    (memory_repo / ".nexus" / "config.yaml").write_text(
        "memory:\n  enabled: true\nsandbox:\n  backend: subprocess\n"
        "checks:\n  - name: slow\n    run: sleep 8\n    timeout: 60\n",
        encoding="utf-8",
    )

    async def body(session: ClientSession) -> tuple[dict[str, Any], float, bool]:
        started = time.monotonic()
        args = {"goal": "Make the slow check fast", "timeout_seconds": 2}
        plan = result_json(await session.call_tool("request_plan", args))
        took = time.monotonic() - started
        response = memory_repo / plan["response"]
        for _ in range(1200):  # the answer carries on in the server and lands there
            if response.is_file():
                break
            await anyio.sleep(0.1)
        return plan, took, response.is_file()

    plan, took, landed = run_mcp(memory_repo, body, "--role", "developer")
    assert took < 7, f"request_plan took {took:.1f} s with a 2 s time box"
    assert plan["status"] == "pending" and plan["text"] is None
    assert plan["answered_by"] == "this process"
    assert plan["response"].endswith("_plan_response.md") and "will be written" in plan["note"]
    assert landed


def test_request_plan_refuses_a_watch_folder_linked_out(memory_repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (memory_repo / ".scratchpad_logs").rmdir()
    (memory_repo / ".scratchpad_logs").symlink_to(elsewhere)

    async def body(session: ClientSession) -> str:
        return error_text(await session.call_tool("request_plan", {"goal": "Anything"}))

    refused = run_mcp(memory_repo, body, "--role", "developer")
    assert "outside the repository" in refused and "nothing was written" in refused
    assert list(elsewhere.iterdir()) == []


def test_long_tools_never_starve_quick_ones(memory_repo: Path) -> None:
    """More run_checks at once than anyio has default worker threads (40): with their own
    small pool, a status call still answers at once."""
    (memory_repo / ".nexus" / "config.yaml").write_text(
        "memory:\n  enabled: false\nsandbox:\n  backend: subprocess\n"
        "checks:\n  - name: slow\n    run: sleep 12\n    timeout: 60\n",
        encoding="utf-8",
    )

    async def body(session: ClientSession) -> tuple[float, dict[str, Any]]:
        async with anyio.create_task_group() as group:
            for _ in range(44):
                group.start_soon(session.call_tool, "run_checks", {})
            await anyio.sleep(2)
            started = time.monotonic()
            status = result_json(await session.call_tool("status", {}))
            took = time.monotonic() - started
            group.cancel_scope.cancel()
        return took, status

    took, status = run_mcp(memory_repo, body, "--role", "developer")
    assert status["role"] == "developer"
    assert took < 5, f"status waited {took:.1f} s behind the checks"


def test_request_plan_never_quotes_ignored_artifacts(memory_repo: Path) -> None:
    (memory_repo / ".gitignore").write_text(".env\nsecret_ignored.py\n", encoding="utf-8")
    (memory_repo / ".env").write_text("SECRET=hunter2\n", encoding="utf-8")
    (memory_repo / "secret_ignored.py").write_text(
        "def SECRET_handler():\n    return 'hunter2'\n", encoding="utf-8"
    )
    (memory_repo / "src").mkdir()
    (memory_repo / "src" / "util.py").write_text(
        "def helper(secret):\n    return secret\n", encoding="utf-8"
    )
    args = {
        "goal": "fix the SECRET handling in helper",
        "artifacts": [".env", "secret_ignored.py", "src/util.py"],
        "timeout_seconds": 120,
    }

    async def body(session: ClientSession) -> dict[str, Any]:
        return result_json(await session.call_tool("request_plan", args))

    plan = run_mcp(memory_repo, body, "--role", "developer")
    text = plan["text"]
    assert plan["status"] == "ok", text
    assert "hunter2" not in text and "SECRET_handler" not in text
    assert "| `.env` | refused: git ignores it" in text
    assert "| `secret_ignored.py` | refused: git ignores it" in text
    assert "| `src/util.py` | ok |" in text and "helper" in text
