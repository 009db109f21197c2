"""The context API and `/mcp` of a real daemon (started with `nexusd start`), hit with a
real HTTP client (httpx2, what the MCP SDK uses) and the SDK's streamable-HTTP client."""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from daemon.helpers import nexusd
from mcp import ClientSession

from api.conftest import auth, run_mcp_http, token
from tests.conftest import git

pytestmark = pytest.mark.slow
SEARCH = "/api/v1/context/search"
INGEST = "/api/v1/context/ingest"


def test_every_status_code(api: tuple[Path, str], make_repo: Callable[..., Path]) -> None:
    repo, base = api
    user, admin = token(repo, "user"), token(repo, "admin")
    elsewhere = token(make_repo("other"), "admin")
    assert f"api        {base} (context API and /mcp)" in nexusd(repo, "status").stdout
    with httpx2.Client(base_url=base, timeout=60) as http:
        # 401: no token, a wrong one, one made for another repository
        assert http.get(SEARCH, params={"q": "x"}).status_code == 401
        bad = http.get(SEARCH, params={"q": "x"}, headers=auth("nxd_00000000_nope"))
        assert bad.status_code == 401 and bad.headers["www-authenticate"] == "Bearer"
        other = http.get(SEARCH, params={"q": "x"}, headers=auth(elsewhere))
        assert other.status_code == 401 and "another repository" in other.json()["error"]

        # 200: ingest, search, get, categories
        saved = http.post(
            INGEST,
            headers=auth(user),
            json={
                "content": "Retry the flaky login test once",
                "category": "lessons",
                "source": "curl",
                "tags": ["ci"],
            },
        )
        assert saved.status_code == 200, saved.text
        entry = saved.json()
        assert entry["path"] == "MEMORY.md" and "query_time_ms" in entry
        text = (repo / "MEMORY.md").read_text(encoding="utf-8")
        assert "Retry the flaky login test once" in text and "(source: curl) #ci" in text
        found = http.get(SEARCH, params={"q": "flaky login", "limit": 3}, headers=auth(user))
        assert found.status_code == 200
        body = found.json()
        assert body["results"][0]["id"] == entry["id"] and "query_time_ms" in body
        got = http.get(f"/api/v1/context/{quote(entry['id'], safe='')}", headers=auth(user))
        assert got.status_code == 200 and "flaky login" in got.json()["body"]
        cats = http.get("/api/v1/context/categories", headers=auth(user)).json()
        allowed = {c["name"]: c["allowed"] for c in cats["categories"]}
        assert allowed["lessons"] and not allowed["security"] and "query_time_ms" in cats

        # 403: a category the role may not touch, with the reason
        denied = http.post(
            INGEST, headers=auth(user), json={"content": "rotate keys", "category": "security"}
        )
        assert denied.status_code == 403 and "requires role 'admin'" in denied.json()["error"]
        peek = http.get(SEARCH, params={"q": "keys", "category": "system"}, headers=auth(user))
        assert peek.status_code == 403
        secret = http.post(
            INGEST, headers=auth(admin), json={"content": "rotate the keys", "category": "security"}
        ).json()
        hidden = http.get(SEARCH, params={"q": "rotate the keys"}, headers=auth(user)).json()
        assert all(r["category"] != "security" for r in hidden["results"])
        assert (
            http.get(
                f"/api/v1/context/{quote(secret['id'], safe='')}", headers=auth(user)
            ).status_code
            == 403
        )
        assert (
            http.get(
                f"/api/v1/context/{quote(secret['id'], safe='')}", headers=auth(admin)
            ).status_code
            == 200
        )

        # 400: unknown category (listing the valid ones), bad JSON, unknown fields, bad params
        unknown = http.get(SEARCH, params={"q": "x", "category": "gossip"}, headers=auth(user))
        assert unknown.status_code == 400 and "lessons" in unknown.json()["fix"]
        for raw in (b"{not json", b"[1, 2]", json.dumps({"content": "x"}).encode()):
            sent = http.post(INGEST, headers=auth(user), content=raw)
            assert sent.status_code == 400, raw
        extra = http.post(
            INGEST, headers=auth(user), json={"content": "x", "category": "notes", "rm": 1}
        )
        assert extra.status_code == 400 and "rm" in extra.json()["error"]
        assert (
            http.get(SEARCH, params={"q": "x", "limit": "lots"}, headers=auth(user)).status_code
            == 400
        )
        assert (
            http.get(SEARCH, params={"q": "x", "sort": "y"}, headers=auth(user)).status_code == 400
        )

        # 413: a body over api.max_body_bytes; 404: an id nothing has
        huge = http.post(
            INGEST, headers=auth(user), json={"content": "y" * 5000, "category": "notes"}
        )
        assert huge.status_code == 413
        assert (
            http.get("/api/v1/context/MEMORY.md%23none%230", headers=auth(user)).status_code == 404
        )
    after = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert "y" * 100 not in after and "rotate keys" not in after  # refused: nothing written


def test_concurrent_ingests_each_land_once(api: tuple[Path, str]) -> None:
    repo, base = api
    tok = token(repo, "developer")
    n = 40

    def ingest(i: int) -> int:
        with httpx2.Client(base_url=base, timeout=120) as http:
            category = ("lessons", "decisions", "daily")[i % 3]
            body = {"content": f"parallel entry {i} of the ingest test", "category": category}
            return http.post(INGEST, headers=auth(tok), json=body).status_code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(ingest, range(n)))
    assert codes == [200] * n
    texts = (repo / "MEMORY.md").read_text("utf-8") + "".join(
        p.read_text("utf-8") for p in (repo / "memory" / "daily").glob("*.md")
    )
    for i in range(n):
        assert texts.count(f"parallel entry {i} of the ingest test") == 1, i
    with httpx2.Client(base_url=base, timeout=60) as http:
        found = http.get(
            SEARCH, params={"q": "parallel entry ingest test", "limit": 50}, headers=auth(tok)
        ).json()
    assert {r["category"] for r in found["results"]} == {"lessons", "decisions", "daily"}


def test_mcp_over_streamable_http(api: tuple[Path, str]) -> None:
    repo, base = api
    user = token(repo, "user")

    async def body(session: ClientSession) -> tuple[Any, Any, Any]:
        tools = await session.list_tools()
        saved = await session.call_tool("memory_save", {"text": "HTTP clients work too"})
        refused = await session.call_tool("checkpoint_restore", {"checkpoint_id": "x"})
        return tools, saved, refused

    tools, saved, refused = run_mcp_http(f"{base}/mcp", user, body)
    assert "memory_search" in {t.name for t in tools.tools}
    assert not saved.is_error and "HTTP clients work too" in (repo / "MEMORY.md").read_text()
    assert refused.is_error and "forbidden" in refused.content[0].text
    with httpx2.Client(base_url=base, timeout=30) as http:
        assert (
            http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
        )


def test_tokens_are_hashed_private_and_never_in_the_working_tree(memory_repo: Path) -> None:
    made = nexusd(memory_repo, "token", "create", "--role", "developer", "--name", "cursor")
    tok = made.stdout.strip()
    assert tok.startswith("nxd_") and "stored hashed" in made.stderr
    store = memory_repo / ".git" / "nexus" / "tokens.json"
    assert tok not in store.read_text(encoding="utf-8")
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert "tokens" not in git(memory_repo, "status", "--porcelain", "--ignored", "-uall")
    listed = nexusd(memory_repo, "token", "list").stdout
    assert "developer" in listed and "cursor" in listed and tok not in listed
    assert nexusd(memory_repo, "token", "create", "--role", "root", check=False).returncode == 9
    nexusd(memory_repo, "token", "revoke", "cursor")
    assert "no tokens" in nexusd(memory_repo, "token", "list").stdout


def test_a_taken_port_fails_open(memory_repo: Path, start_daemon: Callable[..., Path]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        (memory_repo / ".nexus" / "config.yaml").write_text(
            f"memory:\n  enabled: false\napi:\n  enabled: true\n  port: {port}\n",
            encoding="utf-8",
        )
        start_daemon(memory_repo)
        shown = nexusd(memory_repo, "status").stdout
    assert "nexusd is running" in shown
    assert f"could not listen on http://127.0.0.1:{port}" in shown and "api.port" in shown
