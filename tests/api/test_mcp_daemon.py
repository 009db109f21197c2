"""`nexusd mcp` over stdio beside a running daemon: it asks the daemon, gets the daemon's
own plan responses, and carries on in-process when the daemon dies under it."""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from daemon.helpers import daemon_pid, front_matter, pid_gone, wait_until
from mcp import ClientSession

from api.conftest import result_json, run_mcp

pytestmark = pytest.mark.slow


def test_plan_through_mcp_is_the_daemons_file_drop_answer(
    memory_repo: Path, start_daemon: Callable[..., Path]
) -> None:
    start_daemon(memory_repo)

    async def body(session: ClientSession) -> dict[str, Any]:
        args = {"goal": "Make the login test stop flaking", "cycle": 2, "timeout_seconds": 120}
        return result_json(await session.call_tool("request_plan", args))

    plan = run_mcp(memory_repo, body, "--role", "developer")
    request, response = memory_repo / plan["request"], memory_repo / plan["response"]
    assert request.parent.name == ".scratchpad_logs" and request.name.endswith("_plan_request.md")
    assert plan["answered_by"] == "daemon" and plan["status"] == "ok"
    # The text returned is the response the daemon wrote beside the request, for its bytes.
    assert plan["text"] == response.read_text(encoding="utf-8")
    meta = front_matter(response)
    assert meta["request_sha256"] == hashlib.sha256(request.read_bytes()).hexdigest()
    assert "Make the login test stop flaking" in request.read_text(encoding="utf-8")


def test_memory_through_the_daemon_then_in_process_when_it_dies(
    memory_repo: Path, start_daemon: Callable[..., Path]
) -> None:
    start_daemon(memory_repo)
    pid = daemon_pid(memory_repo)
    assert pid is not None

    async def body(session: ClientSession) -> dict[str, Any]:
        saved = result_json(
            await session.call_tool(
                "memory_save", {"text": "The nightly build needs the arm64 runner."}
            )
        )
        first = result_json(await session.call_tool("memory_search", {"query": "arm64 runner"}))
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: pid_gone(pid), timeout=10, what="the daemon to die")
        after = result_json(await session.call_tool("memory_search", {"query": "arm64 runner"}))
        status = result_json(await session.call_tool("status", {}))
        return {"saved": saved, "first": first, "after": after, "status": status}

    out = run_mcp(memory_repo, body)
    assert out["first"]["results"][0]["id"] == out["saved"]["id"]
    assert out["after"]["results"][0]["id"] == out["saved"]["id"]
    assert out["status"]["running"] is False
