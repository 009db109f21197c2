"""A boolean is not a number: `start_line: true` was read as line 1 (a bool is an int in
Python, and pydantic converts it), `k: true` as one hit, `timeout_seconds: true` as one
second. Every numeric argument of every MCP tool, over stdio and over the daemon's `/mcp`,
and every numeric parameter of the context API refuse one, naming the argument."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession

from api.conftest import auth, error_text, result_json, run_mcp, run_mcp_http, token

pytestmark = pytest.mark.slow
BOOLEANS: list[tuple[str, dict[str, Any], str, str]] = [
    ("open_file", {"path": "a.py", "start_line": True}, "start_line", "a whole number ≥ 1"),
    ("open_file", {"path": "a.py", "end_line": True}, "end_line", "a whole number ≥ 1"),
    ("memory_search", {"query": "x", "k": True}, "k", "a whole number ≥ 1 and ≤ 100"),
    ("memory_search", {"query": "x", "recent_days": False}, "recent_days", "a whole number"),
    ("code_search", {"query": "x", "k": True}, "k", "a whole number ≥ 1 and ≤ 100"),
    ("checkpoint_list", {"limit": True}, "limit", "a whole number ≥ 1 and ≤ 500"),
    ("request_plan", {"goal": "g", "cycle": False}, "cycle", "a whole number ≥ 0"),
    ("request_plan", {"goal": "g", "timeout_seconds": True}, "timeout_seconds", "a number > 0"),
]


def _refusals(session: ClientSession) -> Any:
    async def calls() -> list[str]:
        return [error_text(await session.call_tool(tool, args)) for tool, args, _, _ in BOOLEANS]

    return calls()


def _check(errors: list[str]) -> None:
    for (tool, _, name, wanted), error in zip(BOOLEANS, errors, strict=True):
        assert f"argument {name!r} of {tool} must be {wanted}" in error, error
        assert "(a boolean)" in error, error


def test_mcp_tools_refuse_a_boolean_for_a_number(memory_repo: Path) -> None:
    (memory_repo / "a.py").write_text("one = 1\ntwo = 2\n", encoding="utf-8")

    async def body(session: ClientSession) -> tuple[list[str], dict[str, Any]]:
        errors = await _refusals(session)
        # The numbers themselves still work, and so does a count sent as a JSON string.
        sliced = result_json(
            await session.call_tool("open_file", {"path": "a.py", "start_line": 2, "end_line": 2})
        )
        result_json(await session.call_tool("checkpoint_list", {"limit": "3"}))
        return errors, sliced

    errors, sliced = run_mcp(memory_repo, body, "--role", "developer")
    _check(errors)
    assert sliced["text"] == "two = 2" and sliced["start_line"] == 2
    # The refused plan request wrote no request file.
    assert not list(memory_repo.glob(".scratchpad_logs/*_plan_request.md"))


def test_the_http_api_refuses_a_boolean_for_a_number(api: tuple[Path, str]) -> None:
    repo, base = api
    dev = token(repo, "developer")
    with httpx2.Client(base_url=base, timeout=60) as http:
        for name in ("limit", "offset", "recent_days"):
            for text in ("true", "false", "True", " 5", "1_0", "٥", "1e3"):
                answer = http.get(
                    "/api/v1/context/search", params={"q": "x", name: text}, headers=auth(dev)
                )
                assert answer.status_code == 400, (name, text, answer.text)
                assert f"`{name}` must be a whole number" in answer.json()["error"]
        fine = http.get(
            "/api/v1/context/search", params={"q": "x", "limit": "3"}, headers=auth(dev)
        )
        assert fine.status_code == 200 and fine.json()["limit"] == 3

    _check(run_mcp_http(f"{base}/mcp", dev, _refusals))
    assert not list(repo.glob(".scratchpad_logs/*_plan_request.md"))
