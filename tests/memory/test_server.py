"""The search server over a real unix socket, answered by a real service."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nexusd.errors import DaemonError, IndexStoreError
from nexusd.memory.client import ask
from nexusd.memory.server import SearchServer
from nexusd.memory.service import MemoryService
from nexusd.paths import find_repo
from tests.memory.conftest import write

pytestmark = pytest.mark.model


@pytest.fixture
def server(repo: Path, make_service: Callable[..., MemoryService]) -> Iterator[SearchServer]:
    write(repo, "MEMORY.md", "# M\n\n## Lessons\n\nRotate the signing keys every quarter.\n")
    srv = SearchServer(find_repo(repo), make_service())
    srv.start()
    yield srv
    srv.stop()


def test_search_sync_stats_over_the_socket(repo: Path, server: SearchServer) -> None:
    sock = server.path
    assert ask(sock, {"op": "ping"})["status"] == "ready"  # type: ignore[index]
    answer = ask(sock, {"op": "search", "query": "how often do we change cryptographic keys"})
    assert answer is not None
    hit = answer["results"]["hits"][0]
    assert hit["citation"] == "MEMORY.md:5" and "vector" in hit["retrievers"]

    write(repo, "memory/daily/2026-02-02.md", "# d\n\nThe staging database moved to eu-west.\n")
    sync = ask(sock, {"op": "sync", "paths": [str(repo / "memory/daily/2026-02-02.md")]})
    assert sync is not None and sync["report"]["embedded"] == 1
    found = ask(sock, {"op": "search", "query": "eu-west", "mode": "keyword", "k": 1})
    assert found is not None
    assert found["results"]["hits"][0]["path"] == "memory/daily/2026-02-02.md"
    stats = ask(sock, {"op": "stats"})
    assert stats is not None and stats["stats"]["drift"] == 0


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"not json\n", "not JSON"),
        (b"[1, 2]\n", "JSON object"),
        (b'{"op": "explode"}\n', "unknown op"),
        (b'{"op": "search"}\n', "string `query`"),
        (b'{"op": "search", "query": "x", "mode": "psychic"}\n', "unknown search mode"),
    ],
)
def test_bad_requests_get_an_error_line(server: SearchServer, line: bytes, error: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(server.path))
        sock.sendall(line)
        answer = json.loads(sock.makefile("rb").readline())
    assert answer["ok"] is False and error in answer["error"]
    with pytest.raises(IndexStoreError, match="refused"):
        ask(server.path, json.loads(line) if line.startswith(b"{") else {"op": "explode"})


def test_stale_socket_is_replaced_and_a_live_one_is_not(
    repo: Path, make_service: Callable[..., MemoryService]
) -> None:
    layout = find_repo(repo)
    layout.socket_path.parent.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(layout.socket_path))
    stale.close()  # the file stays, nobody listens: a crashed daemon's leftover
    assert ask(layout.socket_path, {"op": "ping"}) is None
    service = make_service()
    first = SearchServer(layout, service)
    first.start()
    try:
        with pytest.raises(DaemonError, match="another"):
            SearchServer(layout, service).start()
    finally:
        first.stop()
    assert not layout.socket_path.exists()


def test_search_many_answers_each_query_in_order(server: SearchServer) -> None:
    queries = [
        {"query": "how often do we change cryptographic keys", "k": 1},
        {"query": "quarter", "k": 2},
        {"query": "", "k": 1},
    ]
    answer = ask(server.path, {"op": "search_many", "queries": queries})
    assert answer is not None
    results = answer["results"]
    assert [r["query"] for r in results] == [q["query"] for q in queries]
    assert results[0]["hits"][0]["citation"] == "MEMORY.md:5"
    assert len(results[0]["hits"]) == 1
    assert results[1]["hits"][0]["citation"] == "MEMORY.md:5"
    assert results[2]["hits"] == []


@pytest.mark.parametrize("queries", [None, "keys", [{"k": 1}], [{"query": 3}], ["keys"]], ids=repr)
def test_search_many_refuses_malformed_queries(server: SearchServer, queries: object) -> None:
    with pytest.raises(IndexStoreError, match="search_many needs `queries`"):
        ask(server.path, {"op": "search_many", "queries": queries})


def test_socket_recall_batches_through_the_daemon(repo: Path, server: SearchServer) -> None:
    from nexusd.context.recall import SocketRecall, recall_for

    recall = recall_for(find_repo(repo))
    assert isinstance(recall, SocketRecall)
    found = recall.search_many([("rotating signing keys", 3), ("quarterly", None)])
    assert [r.query for r in found] == ["rotating signing keys", "quarterly"]
    assert found[0].hits[0].citation == "MEMORY.md:5"
    server.stop()
    gone = recall.search_many([("rotating signing keys", 3)])
    assert gone[0].hits == () and gone[0].note == "no daemon answered"
