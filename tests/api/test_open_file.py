"""MCP `open_file` over stdio (real `nexusd mcp`, SDK client): it serves what git would
show an agent, and never the git directory, ignored files or role-gated memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from daemon.helpers import nexusd
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from api.conftest import error_text, result_json, run_mcp

pytestmark = pytest.mark.slow


def test_open_file_refuses_secrets_git_internals_and_memory(memory_repo: Path) -> None:
    (memory_repo / ".gitignore").write_text(".env\n", encoding="utf-8")
    (memory_repo / ".env").write_text("API_KEY=hunter2\n", encoding="utf-8")
    (memory_repo / "MEMORY.md").write_text(
        "# Memory\n\n## Lessons\n\n- a lesson\n\n## Security\n\n- the vault key is k9\n",
        encoding="utf-8",
    )
    daily = memory_repo / "memory" / "daily"
    daily.mkdir(parents=True)
    (daily / "2026-01-01.md").write_text("# 2026-01-01\n\n- private note\n", encoding="utf-8")
    (memory_repo / "notes.txt").write_text("untracked but not ignored\n", encoding="utf-8")
    nexusd(memory_repo, "token", "create", "--role", "admin")
    refused = [
        "MEMORY.md",
        "memory/daily/2026-01-01.md",
        ".env",
        ".git/config",
        ".git/nexus/tokens.json",
        "./.git/HEAD",
        "sub/../.git/config",
        ".",
    ]

    async def body(session: ClientSession) -> tuple[list[str], list[dict[str, Any]]]:
        errors = [error_text(await session.call_tool("open_file", {"path": p})) for p in refused]
        fine = [
            result_json(await session.call_tool("open_file", {"path": p}))
            for p in ("README.md", "notes.txt", ".gitignore", str(memory_repo / "README.md"))
        ]
        errors.append(
            error_text(
                await session.call_tool("open_file", {"path": str(memory_repo / ".git/config")})
            )
        )
        return errors, fine

    errors, fine = run_mcp(memory_repo, body)
    assert "git directory" in errors.pop()  # absolute inside the repository: the same rules
    assert "memory file" in errors[0] and "memory_search" in errors[0]
    assert "memory file" in errors[1]
    assert "ignored" in errors[2]
    assert all("git directory" in e for e in errors[3:6]), errors[3:6]
    assert all("relative to the repository" in e for e in errors[6:])
    for text in errors:
        assert "k9" not in text and "hunter2" not in text
    assert [f["text"] for f in fine] == ["# demo", "untracked but not ignored", ".env", "# demo"]
    assert fine[-1]["path"] == "README.md"


def test_open_file_cuts_a_first_line_over_the_slice_limit(memory_repo: Path) -> None:
    (memory_repo / "minified.js").write_text("x" * 70_000 + "\nsecond\n", encoding="utf-8")

    async def body(session: ClientSession) -> dict[str, Any]:
        return result_json(await session.call_tool("open_file", {"path": "minified.js"}))

    sliced = run_mcp(memory_repo, body)
    assert sliced["text"] == "x" * (64 * 1024 - 1)
    assert sliced["truncated"] is True and (sliced["start_line"], sliced["end_line"]) == (1, 1)
    assert "only its start is shown" in sliced["note"]


def test_open_file_refuses_binary_files_and_ranges_outside_the_file(memory_repo: Path) -> None:
    (memory_repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (memory_repo / "three.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (memory_repo / "empty.txt").write_text("", encoding="utf-8")
    asked = [
        {"path": "logo.png"},
        {"path": "three.txt", "start_line": 9},
        {"path": "three.txt", "start_line": 3, "end_line": 2},
        {"path": "empty.txt", "start_line": 5},  # was "lines 5-4 of 0", as if it were there
    ]

    async def body(session: ClientSession) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        errors = [error_text(await session.call_tool("open_file", a)) for a in asked]
        last = result_json(
            await session.call_tool("open_file", {"path": "three.txt", "start_line": 3})
        )
        empty = result_json(await session.call_tool("open_file", {"path": "empty.txt"}))
        return errors, last, empty

    errors, last, empty = run_mcp(memory_repo, body)
    assert empty["text"] == "" and empty["total_lines"] == 0
    assert "binary file" in errors[0] and "PNG" not in errors[0]
    assert "it has 3 lines" in errors[1] and "start_line" in errors[1]
    assert "it has 3 lines" in errors[2]
    assert "it has 0 lines" in errors[3]
    assert last["text"] == "three" and last["end_line"] == 3


def test_latest_plan_resource_needs_the_plan_role(memory_repo: Path) -> None:
    logs = memory_repo / ".scratchpad_logs"
    (logs / "20260101T000000Z_plan_response.md").write_text(
        "# Plan\n\nSecurity memory: the vault key is k9\n", encoding="utf-8"
    )

    async def read(session: ClientSession) -> str:
        try:
            found = await session.read_resource("nexusd://plans/latest")
        except MCPError as exc:
            return f"error: {exc}"
        return str(getattr(found.contents[0], "text", ""))

    as_user = run_mcp(memory_repo, read)
    assert as_user.startswith("error:") and "forbidden" in as_user and "developer" in as_user
    assert "k9" not in as_user
    assert "vault key is k9" in run_mcp(memory_repo, read, "--role", "developer")


def test_memory_md_resource_hides_level_one_sections_the_index_hides(memory_repo: Path) -> None:
    (memory_repo / "MEMORY.md").write_text(
        "# Memory\n\n## Lessons\n\n- lesson one\n\n# Infra secrets\n\n- the root pw is pw123\n",
        encoding="utf-8",
    )

    async def read(session: ClientSession) -> str:
        found = await session.read_resource("nexusd://memory/MEMORY.md")
        return str(getattr(found.contents[0], "text", ""))

    as_user = run_mcp(memory_repo, read)
    assert "lesson one" in as_user and "pw123" not in as_user
    assert "not shown to your role: memory, infra secrets" in as_user
    assert "pw123" in run_mcp(memory_repo, read, "--role", "developer")


def test_plan_files_need_the_plan_role(memory_repo: Path) -> None:
    # A plan response quotes memory of every category: open_file must not be a way round
    # the plan role that nexusd://plans/latest requires.
    logs = memory_repo / ".scratchpad_logs"
    (logs / "20260101T000000Z_plan_response.md").write_text(
        "# Plan\n\n## Evidence from Memory\n\n- security: the vault key is k9\n", encoding="utf-8"
    )
    (logs / "20260101T000000Z_plan_request.md").write_text("goal: vault k9\n", encoding="utf-8")
    (logs / "scratch.txt").write_text("k9 again\n", encoding="utf-8")
    (memory_repo / "docs").mkdir()
    (memory_repo / "docs" / "old_plan_response.md").write_text("k9 moved\n", encoding="utf-8")
    kept = "docs/old_plan_response.edited-2026-01-02T00_00_00.md"  # set aside by a new answer
    (memory_repo / kept).write_text("k9 kept\n", encoding="utf-8")
    asked = [
        ".scratchpad_logs/20260101T000000Z_plan_response.md",
        ".scratchpad_logs/20260101T000000Z_plan_request.md",
        ".scratchpad_logs/scratch.txt",
        "docs/old_plan_response.md",
        kept,
    ]

    async def as_user(session: ClientSession) -> list[str]:
        return [error_text(await session.call_tool("open_file", {"path": p})) for p in asked]

    async def as_developer(session: ClientSession) -> list[dict[str, Any]]:
        return [result_json(await session.call_tool("open_file", {"path": p})) for p in asked]

    for refused in run_mcp(memory_repo, as_user):
        assert "forbidden" in refused and "developer" in refused and "plan" in refused, refused
        assert "k9" not in refused
    opened = run_mcp(memory_repo, as_developer, "--role", "developer")
    assert "the vault key is k9" in opened[0]["text"]
    assert [o["path"] for o in opened] == asked


def test_line_numbers_are_editor_lines(memory_repo: Path) -> None:
    # Form feeds, file/group/record separators, NEL and the Unicode line and paragraph
    # separators are not line ends to an editor, grep or the code index; CRLF is one.
    odd = "a\fb\x1cc\x1dd\x1ee\x85f\u2028g\u2029h"
    (memory_repo / "odd.txt").write_text(f"{odd}\r\nsecond\r\nthird\n", encoding="utf-8")

    async def body(session: ClientSession) -> list[dict[str, Any]]:
        return [
            result_json(await session.call_tool("open_file", {"path": "odd.txt"})),
            result_json(await session.call_tool("open_file", {"path": "odd.txt", "start_line": 2})),
        ]

    whole, tail = run_mcp(memory_repo, body)
    assert whole["total_lines"] == 3 and whole["text"] == f"{odd}\nsecond\nthird"
    assert (tail["start_line"], tail["end_line"], tail["text"]) == (2, 3, "second\nthird")
