"""Hostile input to a real daemon's context API (httpx2) and to `nexusd mcp` (SDK client):
always a 4xx/503 answer or a tool error that says what to do, never a bare 500."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest
from daemon.helpers import nexusd
from mcp import ClientSession

from api.conftest import auth, error_text, free_port, run_mcp, token

pytestmark = pytest.mark.slow
SEARCH = "/api/v1/context/search"
INGEST = "/api/v1/context/ingest"


def test_hostile_requests_are_4xx_or_503_never_500(api: tuple[Path, str]) -> None:
    repo, base = api
    user = token(repo, "user")
    with httpx2.Client(base_url=base, timeout=60) as http:
        far = http.get(SEARCH, params={"q": "x", "recent_days": "1000000"}, headers=auth(user))
        assert far.status_code == 400 and "recent_days must be" in far.json()["error"]
        deep = http.post(INGEST, headers=auth(user), content=b"[" * 4000)
        assert deep.status_code == 400 and "nested too deeply" in deep.json()["error"]
        lone = http.post(
            INGEST, headers=auth(user), content=b'{"content": "\\ud800", "category": "lessons"}'
        )
        assert lone.status_code == 400 and "not valid text" in lone.json()["error"]
        (repo / ".git" / "nexus" / "tokens.json").write_text("{not json", encoding="utf-8")
        broken = http.get(SEARCH, params={"q": "x"}, headers=auth(user))
        assert broken.status_code == 503 and "token store" in broken.json()["error"]
        assert str(repo) not in broken.text and "nexusd token create" in broken.json()["fix"]
    assert not (repo / "MEMORY.md").exists()  # nothing refused was written


def test_mcp_tool_errors_for_bad_values_and_a_broken_memory_file(memory_repo: Path) -> None:
    (memory_repo / "MEMORY.md").mkdir()  # a folder where the file should be

    async def body(session: ClientSession) -> list[str]:
        return [
            error_text(
                await session.call_tool("memory_search", {"query": "x", "recent_days": 1e8})
            ),
            error_text(await session.call_tool("memory_save", {"text": "a lesson"})),
        ]

    far, broken = run_mcp(memory_repo, body)
    assert "bad request" in far and "recent_days must be 0..36500" in far
    assert "MEMORY.md is not a file" in broken and "fix: move it away" in broken
    logged = (memory_repo.parent / "mcp-stderr.log").read_text(encoding="utf-8")
    assert "failed unexpectedly" not in logged  # foreseen: no traceback


def test_an_unforeseen_failure_is_a_tool_error_naming_its_type_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from nexusd.api.mcp_server import _guarded

    def memory_save() -> None:
        {}["missing"]  # a bug, as nexusd's own code could have one

    with caplog.at_level("ERROR"), pytest.raises(ToolError, match="KeyError: 'missing'"):
        _guarded(memory_save)()
    assert "tool memory_save failed unexpectedly" in caplog.text
    assert caplog.records[-1].exc_info is not None  # the traceback is logged


def test_context_routes_check_the_host_and_answer_json_everywhere(
    api: tuple[Path, str], make_repo: Callable[..., Path]
) -> None:
    repo, base = api
    user = token(repo, "user")
    elsewhere = token(make_repo("other"), "admin")
    with httpx2.Client(base_url=base, timeout=60) as http:
        rebound = http.get(
            SEARCH, params={"q": "x"}, headers={**auth(user), "Host": "evil.example:80"}
        )
        assert rebound.status_code == 421 and "Host header" in rebound.json()["error"]
        origin = http.get(
            "/api/v1/context/categories",
            headers={**auth(user), "Origin": "http://evil.example"},
        )
        assert origin.status_code == 403 and "Origin header" in origin.json()["error"]
        named = http.get(
            "/api/v1/context/categories",
            headers={**auth(user), "Host": f"localhost:{api_port(base)}"},
        )
        assert named.status_code == 200
        missing = http.get("/nope", headers=auth(user))
        assert missing.status_code == 404 and missing.json()["status"] == 404
        wrong = http.delete(SEARCH, headers=auth(user))
        assert wrong.status_code == 405 and "not allowed" in wrong.json()["error"]
        put = http.put("/mcp", headers=auth(user))
        assert put.status_code == 405 and "POST JSON-RPC messages to /mcp" in put.json()["fix"]
        other = http.get(SEARCH, params={"q": "x"}, headers=auth(elsewhere))
        assert other.status_code == 401 and "another repository" in other.json()["error"]
        assert str(repo) not in other.text and str(repo.parent) not in other.text


def api_port(base: str) -> str:
    return base.rsplit(":", 1)[1]


def test_tokens_survive_moving_the_repository(
    memory_repo: Path, start_daemon: Callable[..., Path]
) -> None:
    tok = token(memory_repo, "user")
    moved = memory_repo.parent / "moved"
    memory_repo.rename(moved)
    port = free_port()
    (moved / ".nexus" / "config.yaml").write_text(
        f"memory:\n  enabled: false\napi:\n  enabled: true\n  port: {port}\n", encoding="utf-8"
    )
    start_daemon(moved)
    with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        cats = http.get("/api/v1/context/categories", headers=auth(tok))
        assert cats.status_code == 200, cats.text
        assert cats.json()["role"] == "user"


def test_status_of_a_stopped_daemon_says_the_api_stopped(api: tuple[Path, str]) -> None:
    repo, base = api
    assert json.loads(nexusd(repo, "status", "--json").stdout)["api"]["state"] == "listening"
    nexusd(repo, "stop")
    shown = json.loads(nexusd(repo, "status", "--json", check=False).stdout)
    assert shown["running"] is False and shown["api"]["state"] == "stopped"
    assert shown["api"]["url"] == base
