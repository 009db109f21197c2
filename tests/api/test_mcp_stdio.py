"""`nexusd mcp` over stdio, driven by the official MCP SDK's client: no daemon running, so
every tool works in the server's own process (real git repository, real LanceDB index,
the packaged embedding model)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from api.conftest import error_text, result_json, run_mcp
from tests.conftest import git

pytestmark = pytest.mark.slow

TOOLS = {
    "memory_search",
    "memory_save",
    "memory_get",
    "memory_categories",
    "code_search",
    "code_symbols",
    "code_impact",
    "open_file",
    "request_plan",
    "run_checks",
    "checkpoint_create",
    "checkpoint_list",
    "checkpoint_restore",
    "status",
}


def test_lists_every_tool_with_a_description_and_typed_parameters(memory_repo: Path) -> None:
    async def body(session: ClientSession) -> tuple[Any, Any]:
        return await session.list_tools(), await session.list_resources()

    tools, resources = run_mcp(memory_repo, body)
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == TOOLS
    for tool in by_name.values():
        assert tool.description and len(tool.description) > 30, tool.name
    search = by_name["memory_search"].input_schema
    assert search["required"] == ["query"]
    assert {"category", "recent_days", "k"} <= set(search["properties"])
    save = by_name["memory_save"].input_schema["properties"]
    assert "lesson" in str(save["kind"]) and "decision" in str(save["kind"])
    assert {str(r.uri) for r in resources.resources} == {
        "nexusd://memory/MEMORY.md",
        "nexusd://plans/latest",
    }


def test_saved_lesson_lands_in_memory_md_and_is_found_by_search_and_get(
    memory_repo: Path,
) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        saved = result_json(
            await session.call_tool(
                "memory_save",
                {"text": "Never hold two shelf locks at once; it deadlocks.", "tags": ["locks"]},
            )
        )
        found = result_json(
            await session.call_tool("memory_search", {"query": "shelf locks deadlock", "k": 3})
        )
        got = result_json(await session.call_tool("memory_get", {"id": saved["id"]}))
        resource = await session.read_resource("nexusd://memory/MEMORY.md")
        return {"saved": saved, "found": found, "got": got, "resource": resource}

    out = run_mcp(memory_repo, body)
    text = (memory_repo / "MEMORY.md").read_text(encoding="utf-8")
    assert "## Lessons" in text
    assert "Never hold two shelf locks at once; it deadlocks. #locks" in text
    assert out["saved"]["path"] == "MEMORY.md" and out["saved"]["category"] == "lessons"
    assert text.split("\n")[out["saved"]["line"] - 1].endswith("it deadlocks. #locks")
    top = out["found"]["results"][0]
    assert top["id"] == out["saved"]["id"] and top["category"] == "lessons"
    assert "query_time_ms" in out["found"]
    assert "Never hold two shelf locks" in out["got"]["body"]
    assert "Never hold two shelf locks" in out["resource"].contents[0].text


def test_concurrent_saves_lose_nothing(memory_repo: Path) -> None:
    n = 16

    async def body(session: ClientSession) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []

        async def save(i: int) -> None:
            kind = "lesson" if i % 2 else "note"
            args = {"text": f"entry number {i} about parallel writers", "kind": kind}
            results.append(result_json(await session.call_tool("memory_save", args)))

        async with anyio.create_task_group() as group:
            for i in range(n):
                group.start_soon(save, i)
        found = result_json(
            await session.call_tool("memory_search", {"query": "parallel writers", "k": 50})
        )
        results.append(found)
        return results

    out = run_mcp(memory_repo, body)
    text = (memory_repo / "MEMORY.md").read_text(encoding="utf-8")
    for i in range(n):
        assert text.count(f"entry number {i} about parallel writers") == 1, i
    assert text.count("## Lessons") == 1 and text.count("## Notes") == 1
    ids = {r["id"] for r in out[-1]["results"]}
    assert {r["id"] for r in out[:-1]} <= ids  # every section holding them is indexed


def test_errors_are_tool_errors_and_the_server_keeps_serving(
    memory_repo: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n", encoding="utf-8")
    os.symlink(secret, memory_repo / "link.txt")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_file", {"path": "../secret.txt"}),
        ("open_file", {"path": str(secret)}),
        ("open_file", {"path": "link.txt"}),
        ("open_file", {"path": "missing.py"}),
        ("checkpoint_restore", {"checkpoint_id": "20260101T000000Z-abcdef"}),
        ("memory_save", {"text": "we chose integer cents", "kind": "decision"}),
        ("memory_search", {"query": "x", "category": "nonsense"}),
        ("memory_search", {"query": "x", "category": "security"}),
        ("memory_search", {"query": "x", "k": "many"}),
        ("memory_get", {"id": "MEMORY.md#nothing#0"}),
        ("no_such_tool", {}),
    ]

    async def body(session: ClientSession) -> tuple[list[str], dict[str, Any]]:
        errors = [error_text(await session.call_tool(name, args)) for name, args in calls]
        return errors, result_json(await session.call_tool("status", {}))

    errors, status = run_mcp(memory_repo, body)
    assert "relative to the repository" in errors[0]
    assert "relative to the repository" in errors[1]
    assert "outside the repository" in errors[2]
    assert "missing.py" in errors[3]
    assert "forbidden" in errors[4] and "restore" in errors[4] and "admin" in errors[4]
    assert "`nexusd mcp --role admin` (stdio)" in errors[4]  # no tokens over stdio
    assert "forbidden" in errors[5] and "decisions" in errors[5]
    assert "bad request" in errors[6] and "lessons" in errors[6]  # lists the valid ones
    assert "forbidden" in errors[7] and "security" in errors[7]
    assert "valid integer" in errors[8]
    assert "no memory chunk" in errors[9]
    assert "no_such_tool" in errors[10]
    assert status["role"] == "user" and status["running"] is False
    assert status["code"]["state"].startswith("not open in this process")
    assert not (memory_repo / "MEMORY.md").exists()  # the refused save wrote nothing


def test_code_tools_and_file_slices(memory_repo: Path) -> None:
    pkg = memory_repo / "shop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "shelf.py").write_text(
        "class Shelf:\n    def place(self, order):\n        return order\n", encoding="utf-8"
    )
    (pkg / "kitchen.py").write_text(
        "from shop.shelf import Shelf\n\n\ndef cook():\n    return Shelf().place(1)\n",
        encoding="utf-8",
    )
    git(memory_repo, "add", ".")
    git(memory_repo, "commit", "-q", "-m", "shop")

    async def body(session: ClientSession) -> list[dict[str, Any]]:
        calls = [
            ("code_search", {"query": "Shelf.place drops an order", "k": 3}),
            ("code_symbols", {"path": "shop/shelf.py"}),
            ("code_impact", {"path": "shop/shelf.py", "symbol": "Shelf"}),
            ("open_file", {"path": "shop/kitchen.py", "start_line": 4, "end_line": 5}),
        ]
        answers = [result_json(await session.call_tool(n, a)) for n, a in calls]
        # An agent edits a file and reads the index at once: it sees its edit.
        (pkg / "shelf.py").write_text(
            "class Shelf:\n    def place(self, order):\n        return order\n\n"
            "    def restock(self, crate):\n        return crate\n",
            encoding="utf-8",
        )
        after = await session.call_tool("code_symbols", {"path": "shop/shelf.py"})
        status = await session.call_tool("status", {})
        return [*answers, result_json(after), result_json(status)]

    search, symbols, impact, sliced, edited, status = run_mcp(memory_repo, body)
    assert status["running"] is False and status["code"]["daemon"] is False
    assert status["code"]["files"] >= 3 and status["code"]["state"] == "ready"
    assert [u["qualname"] for u in edited["units"]][-1] == "Shelf.restock"
    assert search["hits"][0]["path"] == "shop/shelf.py"
    assert [u["qualname"] for u in symbols["units"]] == ["Shelf", "Shelf.place"]
    assert any(e["path"] == "shop/kitchen.py" for e in impact["impact"]["used_by"])
    assert sliced["text"] == "def cook():\n    return Shelf().place(1)"
    assert (sliced["start_line"], sliced["end_line"], sliced["total_lines"]) == (4, 5, 5)


def test_checkpoints_and_checks_by_role(memory_repo: Path) -> None:
    (memory_repo / ".nexus" / "config.yaml").write_text(
        "memory:\n  enabled: true\nsandbox:\n  backend: subprocess\n"
        "checks:\n  - name: smoke\n    run: python3 -c \"print('ok')\"\n    timeout: 30\n",
        encoding="utf-8",
    )
    readme = memory_repo / "README.md"

    async def body(session: ClientSession) -> list[Any]:
        made = result_json(await session.call_tool("checkpoint_create", {"message": "before"}))
        readme.write_text("changed\n", encoding="utf-8")
        listed = result_json(await session.call_tool("checkpoint_list", {}))
        restored = result_json(
            await session.call_tool("checkpoint_restore", {"checkpoint_id": made["id"]})
        )
        checks = result_json(await session.call_tool("run_checks", {}))
        return [made, listed, restored, checks]

    made, listed, restored, checks = run_mcp(memory_repo, body, "--role", "admin")
    assert listed["checkpoints"][0]["id"] == made["id"]
    assert restored["checkpoint"] == made["id"] and restored["pre_restore"]
    assert readme.read_text(encoding="utf-8") == "# demo\n"
    assert checks["status"] == "passed"
    assert checks["results"][0]["name"] == "smoke"

    async def as_user(session: ClientSession) -> list[str]:
        return [
            error_text(await session.call_tool("run_checks", {})),
            error_text(await session.call_tool("checkpoint_create", {})),
        ]

    refused = run_mcp(memory_repo, as_user)
    assert all("forbidden" in e and "developer" in e for e in refused)


def test_two_servers_saving_at_once_lose_nothing(memory_repo: Path) -> None:
    """Two agents, each with its own `nexusd mcp` and no daemon: both write MEMORY.md and
    the same index at once."""
    n = 6

    def agent(name: str) -> list[dict[str, Any]]:
        async def body(session: ClientSession) -> list[dict[str, Any]]:
            out = []
            for i in range(n):
                args = {"text": f"{name} learned thing {i}", "tags": [name]}
                out.append(result_json(await session.call_tool("memory_save", args)))
            return out

        return run_mcp(memory_repo, body)

    with ThreadPoolExecutor(2) as pool:
        saved = list(pool.map(agent, ["alpha", "beta"]))
    text = (memory_repo / "MEMORY.md").read_text(encoding="utf-8")
    for name in ("alpha", "beta"):
        for i in range(n):
            assert text.count(f"{name} learned thing {i} #{name}") == 1, (name, i)
    assert all(s["path"] == "MEMORY.md" for batch in saved for s in batch)

    async def search(session: ClientSession) -> dict[str, Any]:
        return result_json(await session.call_tool("memory_get", {"id": saved[0][0]["id"]}))

    body = run_mcp(memory_repo, search)["body"]
    assert "alpha learned thing 5" in body and "beta learned thing 5" in body
