"""The context API and the MCP server over a warm daemon: latency and concurrent ingests.

Builds a repository whose MEMORY.md holds N chunks (10k; `--quick`: 1k) in the
categories of the role table, indexes it, copies it (index included) into a second
repository that searches the old way (`memory.search.cache_max_rows: 0`: LanceDB scans
the stored vectors per query instead of the daemon's in-memory copy), starts a real
daemon (`nexusd start`, `api.enabled`) on each, and measures, interleaved query by query:

- `GET /api/v1/context/search` through a keep-alive HTTP client (role developer) on
  both daemons, beside the same search sent straight to the new daemon's unix socket
  (what HTTP, auth and role filtering add is the ratio of medians);
- an MCP `memory_search` round trip through `nexusd mcp` over stdio (the SDK's client;
  the server asks the daemon) and through `/mcp` over streamable HTTP, on both daemons;
- 200 concurrent `POST /api/v1/context/ingest` (16 clients) on the new daemon: every
  entry must land in the markdown and in the index exactly once.

Goals: context API search p99 ≤ 50 ms at 10k chunks; MCP round trip p50 ≤ 30 ms.

    python benchmarks/api.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _memory_common import machine, summary

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    f"{a}{b}"
    for a in (
        "cache",
        "retry",
        "daemon",
        "socket",
        "index",
        "lesson",
        "deploy",
        "schema",
        "token",
        "queue",
        "worker",
        "commit",
        "sandbox",
        "config",
        "parser",
        "fixture",
    )
    for b in ("", "s", "ing", "ed")
]
SECTIONS = ("Lessons", "Decisions", "Preferences", "Notes", "Project", "Security")


def nexusd(repo: Path, *args: str) -> str:
    cmd = [sys.executable, "-P", "-m", "nexusd", *args]
    return subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_repo(base: Path, chunks: int, port: int) -> Path:
    """A git repository with `chunks` memory chunks: a tenth in MEMORY.md's sections, the
    rest in daily notes of 100 entries each (files stay under memory.max_file_bytes)."""
    repo = base / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    rng = random.Random(7)

    def words() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(30))

    parts = ["# Memory\n"]
    per = chunks // 10 // len(SECTIONS)
    for section in SECTIONS:
        parts.append(f"## {section}\n")
        parts.extend(f"### {section.lower()} entry {i}\n\n- {words()}\n" for i in range(per))
    (repo / "MEMORY.md").write_text("\n".join(parts), encoding="utf-8")
    daily = repo / "memory" / "daily"
    daily.mkdir(parents=True)
    left = chunks - per * len(SECTIONS)
    for day in range((left + 99) // 100):
        count = min(100, left - day * 100)
        notes = [f"# note {day}\n"]
        notes.extend(f"## {i // 60:02d}:{i % 60:02d} entry\n\n- {words()}\n" for i in range(count))
        name = f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}.md"
        (daily / name).write_text("\n".join(notes), encoding="utf-8")
    (repo / ".nexus").mkdir()
    write_config(repo, port, cache=True)
    return repo


def write_config(repo: Path, port: int, *, cache: bool) -> None:
    """API on `port`, no code index; `cache=False`: vectors searched by LanceDB's scan."""
    text = f"api:\n  enabled: true\n  port: {port}\ncode:\n  enabled: false\n"
    if not cache:
        text += "memory:\n  search:\n    cache_max_rows: 0\n"
    (repo / ".nexus" / "config.yaml").write_text(text, encoding="utf-8")


@functools.cache
def socket_path(repo: Path) -> Path:
    """The daemon's socket (find_repo runs git: once, not inside the timed call)."""
    from nexusd.paths import find_repo

    return find_repo(repo).socket_path


def socket_search(repo: Path, query: str) -> float:
    from nexusd.memory.client import ask

    path = socket_path(repo)
    started = time.perf_counter()
    ask(path, {"op": "search", "query": query, "k": 8})
    return time.perf_counter() - started


def measure_http(repo: Path, targets: dict[str, tuple[str, str]], n: int) -> dict[str, list[float]]:
    """`targets`: name → (base URL, token). Each round asks every target and the unix
    socket once, each with its own query, in an order that rotates every round."""
    import httpx2

    rng = random.Random(11)
    out: dict[str, list[float]] = {"socket": []}
    clients = {}
    for name, (base, token) in targets.items():
        headers = {"Authorization": f"Bearer {token}"}
        clients[name] = httpx2.Client(base_url=base, headers=headers)
        out[name] = []
        out[f"{name}_server"] = []
    paths = [*targets, "socket"]
    try:
        for i in range(n + 20):
            # Distinct queries for each path: the embedder caches query vectors, so the
            # same query second would skip its embedding.
            for name in paths[i % len(paths) :] + paths[: i % len(paths)]:
                query = " ".join(rng.choice(WORDS) for _ in range(4))
                if name == "socket":
                    took = socket_search(repo, query)
                else:
                    started = time.perf_counter()
                    params = {"q": query, "limit": 8}
                    answer = clients[name].get("/api/v1/context/search", params=params)
                    took = time.perf_counter() - started
                    assert answer.status_code == 200, answer.text
                if i < 20:
                    continue
                out[name].append(took)
                if name != "socket":
                    out[f"{name}_server"].append(answer.json()["query_time_ms"] / 1000)
    finally:
        for client in clients.values():
            client.close()
    return out


async def _mcp_call(session: Any, query: str) -> float:
    started = time.perf_counter()
    result = await session.call_tool("memory_search", {"query": query, "k": 8})
    if result.is_error:
        raise SystemExit(f"memory_search failed: {result.content[0].text}")
    return time.perf_counter() - started


def measure_mcp(targets: dict[str, tuple[Path, str, str]], n: int) -> dict[str, list[float]]:
    """`targets`: name → (repo, base URL, token). Stdio and `/mcp` sessions on every
    target at once, called in turn (order rotating), a distinct query each."""
    import anyio
    import httpx2
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> dict[str, list[float]]:
        sessions: dict[str, Any] = {}
        async with contextlib.AsyncExitStack() as stack:
            for name, (repo, base, token) in targets.items():
                params = StdioServerParameters(
                    command=sys.executable, args=["-P", "-m", "nexusd", "mcp", "-C", str(repo)]
                )
                errlog = stack.enter_context((repo.parent / f"mcp-{name}.log").open("w"))
                read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
                sessions[f"mcp_stdio{name}"] = ClientSession(read, write)
                client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
                await stack.enter_async_context(client)
                transport = streamable_http_client(f"{base}/mcp", http_client=client)
                read, write, *_ = await stack.enter_async_context(transport)
                sessions[f"mcp_http{name}"] = ClientSession(read, write)
            for session in sessions.values():
                await stack.enter_async_context(session)
                await session.initialize()
            rng = random.Random(13)
            names = list(sessions)
            out: dict[str, list[float]] = {name: [] for name in names}
            for i in range(n + 10):
                for name in names[i % len(names) :] + names[: i % len(names)]:
                    took = await _mcp_call(sessions[name], " ".join(rng.sample(WORDS, 4)))
                    if i >= 10:
                        out[name].append(took)
            return out

    return anyio.run(main)


def ingest_200(repo: Path, base: str, token: str) -> dict[str, Any]:
    import httpx2

    def one(i: int) -> int:
        body = {"content": f"ingestmark{i}z from the benchmark", "category": "lessons"}
        with httpx2.Client(base_url=base, timeout=300) as http:
            headers = {"Authorization": f"Bearer {token}"}
            return http.post("/api/v1/context/ingest", json=body, headers=headers).status_code

    started = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(one, range(200)))
    seconds = time.perf_counter() - started
    text = (repo / "MEMORY.md").read_text(encoding="utf-8")
    in_markdown = sum(text.count(f"ingestmark{i}z ") == 1 for i in range(200))
    return {"ok": codes.count(200), "seconds": seconds, "in_markdown": in_markdown}


def count_in_index(repo: Path) -> int:
    """Entries found exactly once across the indexed chunk bodies (daemon stopped)."""
    from nexusd.memory.store import MemoryStore
    from nexusd.paths import find_repo

    store = MemoryStore(str(find_repo(repo).index_dir))
    store.open(None)
    bodies = " ".join(store.table.to_arrow().column("body").to_pylist())
    return sum(bodies.count(f"ingestmark{i}z ") == 1 for i in range(200))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k chunks, fewer samples")
    args = parser.parse_args()
    chunks, n = (1_000, 50) if args.quick else (10_000, 200)
    sys.path.insert(0, str(ROOT))
    from nexusd.api.bearer import TokenStore
    from nexusd.paths import find_repo

    with tempfile.TemporaryDirectory() as tmp:
        port, old_port = free_port(), free_port()
        repo = make_repo(Path(tmp) / "new", chunks, port)
        started = time.perf_counter()
        report = json.loads(nexusd(repo, "memory", "reindex", "--json"))
        took = time.perf_counter() - started
        print(f"indexed {report['written']} chunks of {report['files']} files in {took:.0f}s")
        if report["written"] < chunks or report["skipped"]:
            raise SystemExit(f"the workload was not indexed whole: {report}")
        # The baseline: the same repository and index, searched by LanceDB's scan.
        old = Path(tmp) / "old" / "repo"
        shutil.copytree(repo, old, symlinks=True)
        write_config(old, old_port, cache=False)
        token = TokenStore(find_repo(repo)).create("developer", "bench")
        old_token = TokenStore(find_repo(old)).create("developer", "bench")
        base, old_base = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{old_port}"
        nexusd(repo, "start")
        nexusd(old, "start")
        try:
            time.sleep(5)  # the daemons load the model in the background
            targets = {"api": (base, token), "api_lancedb": (old_base, old_token)}
            http = measure_http(repo, targets, n)
            both = {"": (repo, base, token), "_lancedb": (old, old_base, old_token)}
            mcp = measure_mcp(both, n)
            nexusd(old, "stop")
            ingests = ingest_200(repo, base, token)
        finally:
            nexusd(repo, "stop")
            with contextlib.suppress(subprocess.CalledProcessError):
                nexusd(old, "stop")
        ingests["in_index"] = count_in_index(repo)

    stats = {name: summary([v * 1000 for v in values]) for name, values in {**http, **mcp}.items()}
    print(f"\n{'path':<18} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'n':>5}")
    for name, s in stats.items():
        print(f"{name:<18} {s['median']:>8.1f} {s['p99']:>8.1f} {s['max']:>8.1f} {s['n']:>5}")
    ratio = stats["api"]["median"] / stats["socket"]["median"]
    print(f"API vs unix socket (ratio of medians): {ratio:.2f}")
    speedup = stats["api"]["median"] / stats["api_lancedb"]["median"]
    print(f"API, vectors in memory vs LanceDB's scan (ratio of medians): {speedup:.2f}")
    print(
        f"200 concurrent ingests: {ingests['ok']} answered 200 in {ingests['seconds']:.1f}s; "
        f"{ingests['in_markdown']} once in MEMORY.md, {ingests['in_index']} once in the index"
    )
    metrics = {
        f"api_search_p50_ms_{chunks}": round(stats["api"]["median"], 2),
        f"api_search_p99_ms_{chunks}": round(stats["api"]["p99"], 2),
        f"api_search_lancedb_p50_ms_{chunks}": round(stats["api_lancedb"]["median"], 2),
        f"api_search_lancedb_p99_ms_{chunks}": round(stats["api_lancedb"]["p99"], 2),
        "api_vs_lancedb_ratio": round(speedup, 3),
        "api_vs_socket_ratio": round(ratio, 3),
        "mcp_stdio_p50_ms": round(stats["mcp_stdio"]["median"], 2),
        "mcp_stdio_p99_ms": round(stats["mcp_stdio"]["p99"], 2),
        "mcp_stdio_lancedb_p50_ms": round(stats["mcp_stdio_lancedb"]["median"], 2),
        "mcp_http_p50_ms": round(stats["mcp_http"]["median"], 2),
        "mcp_http_lancedb_p50_ms": round(stats["mcp_http_lancedb"]["median"], 2),
        "ingests_ok": ingests["ok"],
        "ingests_in_markdown_once": ingests["in_markdown"],
        "ingests_in_index_once": ingests["in_index"],
    }
    print(json.dumps({"benchmark": "api", "metrics": metrics, "samples": n, "machine": machine()}))


if __name__ == "__main__":
    main()
