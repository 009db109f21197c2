"""Every path of a real daemon's API answers itself, never a redirect: a trailing slash is
served as the path without it, and a path with no route is the API's JSON 404 with a fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession

from api.conftest import auth, run_mcp_http, token

pytestmark = pytest.mark.slow
CONTEXT = "/api/v1/context"
# Each of these answered a bare 307 (Starlette's trailing-slash redirect), built from the
# request's own Host header and sent before the token or the Host was checked.
ONCE_REDIRECTED = [
    ("GET", CONTEXT),
    ("POST", CONTEXT),
    ("GET", "/mcp/"),
    ("POST", "/mcp/"),
    ("DELETE", "/mcp/"),
    ("PUT", "/mcp/"),
    ("GET", "/mcp//"),
]


def _no_redirect(answer: httpx2.Response) -> dict[str, Any]:
    assert not answer.is_redirect and "location" not in answer.headers, (
        answer.request.method,
        answer.request.url,
        answer.status_code,
        answer.headers,
    )
    assert answer.headers["content-type"].startswith("application/json"), answer.text
    body = answer.json()
    assert isinstance(body, dict)
    return body


def test_no_path_answers_a_redirect(api: tuple[Path, str]) -> None:
    repo, base = api
    user = token(repo, "user")
    with httpx2.Client(base_url=base, timeout=60) as http:
        for method, path in ONCE_REDIRECTED:
            # (With a token and the right Host, `GET /mcp/` is MCP's event stream: below.)
            for headers in ({}, {**auth(user), "Host": "evil.example:80"}):
                answer = http.request(method, path, headers=headers)
                body = _no_redirect(answer)
                assert 400 <= answer.status_code < 500, (method, path, answer.text)
                assert body["status"] == answer.status_code and body["fix"], body
        # A path with no route says which routes there are, whatever the slashes.
        for method, path in [("GET", CONTEXT), ("POST", CONTEXT), ("GET", f"{CONTEXT}/")]:
            body = _no_redirect(http.request(method, path, headers=auth(user)))
            assert body["status"] == 404 and f"{CONTEXT}/search" in body["fix"], body
        assert _no_redirect(http.get("/mcp//", headers=auth(user)))["status"] == 404
        # The token is checked first, as on every context route; `/mcp/` checks the Host
        # first, as they do, and says so in JSON (the SDK's own check answered text).
        assert _no_redirect(http.get(f"{CONTEXT}/"))["status"] == 401
        rebound = http.post("/mcp/", headers={**auth(user), "Host": "evil.example:80"})
        assert _no_redirect(rebound)["status"] == 421 and "Host header" in rebound.json()["error"]
        ping = http.post(
            "/mcp/",
            headers={**auth(user), "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
        assert _no_redirect(ping) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_trailing_slash_serves_the_route_itself(api: tuple[Path, str]) -> None:
    repo, base = api
    user = token(repo, "user")
    with httpx2.Client(base_url=base, timeout=60) as http:
        saved = http.post(
            f"{CONTEXT}/ingest/",
            headers=auth(user),
            json={"content": "Trailing slashes are served", "category": "lessons"},
        )
        assert _no_redirect(saved)["category"] == "lessons", saved.text
        found = _no_redirect(
            http.get(f"{CONTEXT}/search/", params={"q": "trailing slashes"}, headers=auth(user))
        )
        assert found["results"] and "Trailing slashes" in found["results"][0]["snippet"]
        cats = _no_redirect(http.get(f"{CONTEXT}/categories/", headers=auth(user)))
        assert cats["role"] == "user"
        wrong = _no_redirect(http.get(f"{CONTEXT}/ingest/", headers=auth(user)))
        assert wrong["status"] == 405 and "ingest is POST" in wrong["fix"]

    async def names(session: ClientSession) -> list[str]:
        return [t.name for t in (await session.list_tools()).tools]

    assert "memory_search" in run_mcp_http(f"{base}/mcp/", user, names)
