"""`nexusd mcp` over stdio against a hostile client and a hostile working tree (real
subprocess, SDK client): links planted under predictable names, arguments it does not
take, and counts a pager relies on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from api.conftest import error_text, result_json, run_mcp

pytestmark = pytest.mark.slow


async def _read(session: ClientSession, uri: str) -> str:
    try:
        found = await session.read_resource(uri)
    except MCPError as exc:
        return f"error: {exc}"
    return str(getattr(found.contents[0], "text", ""))


def test_memory_md_resource_never_follows_a_link_out(memory_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Memory\n\n## Lessons\n\n- the outside secret zz9\n", encoding="utf-8")
    (memory_repo / "MEMORY.md").symlink_to(outside)

    async def body(session: ClientSession) -> str:
        return await _read(session, "nexusd://memory/MEMORY.md")

    for role in ("user", "admin"):
        served = run_mcp(memory_repo, body, "--role", role)
        assert served.startswith("error:") and "zz9" not in served, served
        assert "MEMORY.md" in served and "regular file" in served


def test_latest_plan_skips_a_linked_newest_response(memory_repo: Path, tmp_path: Path) -> None:
    logs = memory_repo / ".scratchpad_logs"
    (logs / "20260101T000000Z_plan_response.md").write_text("# the real plan\n", encoding="utf-8")
    planted = tmp_path / "planted.md"
    planted.write_text("# planted outside\n", encoding="utf-8")
    (logs / "99990101T000000Z_plan_response.md").symlink_to(planted)
    (logs / "99990102T000000Z_plan_response.md").symlink_to(tmp_path / "dangling.md")

    async def body(session: ClientSession) -> str:
        return await _read(session, "nexusd://plans/latest")

    assert run_mcp(memory_repo, body, "--role", "developer") == "# the real plan\n"


def test_unknown_tool_arguments_are_refused(memory_repo: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_search", {"query": "anything", "limit": 2}),
        ("memory_save", {"text": "x", "bogus": 1}),
        ("memory_save", {"text": "a daily thing", "daily": True, "kind": "decision"}),
        ("status", {"verbose": True}),
    ]

    async def body(session: ClientSession) -> tuple[list[str], Any, dict[str, Any]]:
        errors = [error_text(await session.call_tool(name, args)) for name, args in calls]
        tools = await session.list_tools()
        daily = result_json(
            await session.call_tool("memory_save", {"text": "a daily thing", "daily": True})
        )
        return errors, tools, daily

    errors, tools, daily = run_mcp(memory_repo, body)
    assert "limit" in errors[0] and "unknown argument" in errors[0] and "k" in errors[0]
    assert "bogus" in errors[1] and "unknown argument" in errors[1]
    assert "daily" in errors[2] and "kind" in errors[2]
    assert "verbose" in errors[3]
    for tool in tools.tools:
        assert tool.input_schema.get("additionalProperties") is False, tool.name
    assert daily["category"] == "daily" and daily["path"].startswith("memory/daily/")
    assert not (memory_repo / "MEMORY.md").exists()  # the refused saves wrote nothing


def test_search_total_counts_every_hit_not_the_page(memory_repo: Path) -> None:
    # One entry in each section, so each is a chunk of its own: five hits.
    saves: list[dict[str, Any]] = [{"kind": k} for k in ("lesson", "decision", "preference")]
    saves += [{"kind": "note"}, {"daily": True}]

    async def body(session: ClientSession) -> dict[str, Any]:
        for i, where in enumerate(saves):
            args = {"text": f"Flaky test number {i}: pin the clock in the fixture.", **where}
            result_json(await session.call_tool("memory_save", args))
        return result_json(await session.call_tool("memory_search", {"query": "flaky", "k": 2}))

    found = run_mcp(memory_repo, body, "--role", "admin")
    assert len(found["results"]) == 2
    assert found["total"] >= 5 and found["more"] is True
