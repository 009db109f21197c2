"""Fixtures of the API tests: `nexusd mcp` over stdio and the daemon's `/mcp`, each driven
by the official SDK's client."""

from __future__ import annotations

import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from daemon.helpers import nexusd, nexusd_env, served, start_daemon
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["served", "start_daemon"]
T = TypeVar("T")
Session = Callable[[ClientSession], Awaitable[T]]


def run_mcp(repo: Path, body: Callable[[ClientSession], Awaitable[T]], *args: str) -> T:
    """Start `nexusd mcp -C repo ARGS` as a real subprocess, run `body` with an initialized
    SDK client session on it, and close it (the server process ends with the session)."""

    async def main() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-P", "-m", "nexusd", "mcp", "-C", str(repo), *args],
            env=nexusd_env(),
            cwd=str(repo),
        )
        with (repo.parent / "mcp-stderr.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def run_mcp_http(url: str, tok: str, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Run `body` with an initialized SDK client session on the daemon's streamable HTTP
    endpoint `url`, holding the bearer token `tok`."""

    async def main() -> T:
        async with (
            httpx2.AsyncClient(headers=auth(tok), timeout=60) as client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def result_json(result: Any) -> dict[str, Any]:
    """The structured content of a successful tool call (fails the test on a tool error)."""
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    assert isinstance(data, dict)
    return data


def error_text(result: Any) -> str:
    """The message of a tool call that must have failed as a tool error."""
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    return str(result.content[0].text)


@pytest.fixture
def memory_repo(served: Path) -> Path:
    """A served repository with the memory index on (the daemon tests' user config turns
    it off) and the subprocess sandbox."""
    (served / ".nexus").mkdir(exist_ok=True)
    (served / ".nexus" / "config.yaml").write_text(
        "memory:\n  enabled: true\nsandbox:\n  backend: subprocess\n", encoding="utf-8"
    )
    return served


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def token(repo: Path, role: str) -> str:
    return nexusd(repo, "token", "create", "--role", role, "--name", role).stdout.strip()


@pytest.fixture
def api(memory_repo: Path, start_daemon: Callable[..., Path]) -> tuple[Path, str]:
    """A daemon serving the API on a free loopback port: (repository, base URL)."""
    port = free_port()
    (memory_repo / ".nexus" / "config.yaml").write_text(
        f"memory:\n  enabled: true\napi:\n  enabled: true\n  port: {port}\n"
        "  max_body_bytes: 4096\n",
        encoding="utf-8",
    )
    start_daemon(memory_repo)
    return memory_repo, f"http://127.0.0.1:{port}"


def auth(tok: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tok}"}
