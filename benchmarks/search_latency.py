"""Search latency including the query embedding, at 10k and 100k chunks.

Measures `run_search` (nexusd's hybrid search: query embedding, LanceDB vector
search, native FTS, fusion) on tables of 10k and 100k chunks, and the same search
with the vectors held in memory as the daemon holds them (`vector_cache`; tables with
a vector index stay on LanceDB); baseline in the same run, interleaved: the query
embedding alone (raw model.encode of one query), so the share spent in the index is
visible. Goal: p99 ≤ 50 ms at 10k,
≤ 100 ms at 100k.

The 10k chunk texts are generated and really embedded (cached on disk by
sha256, like the index itself). For 100k, the 10k real vectors are reused ten
times with small noise and distinct texts: search cost depends on row count and
width, not on where a vector came from.

    python benchmarks/search_latency.py [--quick]     # --quick: 10k only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
from _memory_common import machine, set_threads, summary, torch_embedder

from nexusd.memory.embedder import Embedder
from nexusd.memory.filters import Filters
from nexusd.memory.search import SearchSettings, run_search
from nexusd.memory.store import MemoryStore
from nexusd.memory.vector_cache import VectorCache

VOCAB = [
    f"{a}{b}"
    for a in (
        "cache",
        "retry",
        "daemon",
        "socket",
        "index",
        "vector",
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
        "memory",
        "search",
        "filter",
    )
    for b in ("", "s", "ing", "ed", "er")
]


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"Note {seed}-{i}: " + " ".join(rng.choice(VOCAB) for _ in range(30)) for i in range(n)]


def embed_cached(emb: Embedder, items: list[str], cache: Path) -> np.ndarray:
    """Embeddings by sha256 of each text, kept on disk between runs."""
    path = cache / f"latency-{hashlib.sha256(emb.spec.encode()).hexdigest()[:12]}.npz"
    known: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path) as data:
            known = {k: data[k] for k in data.files}
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in items]
    need = [i for i, k in enumerate(keys) if k not in known]
    if need:
        t = time.perf_counter()
        for i, vec in zip(need, emb.encode([items[i] for i in need]), strict=True):
            known[keys[i]] = vec
        print(f"embedded {len(need)} chunk texts in {time.perf_counter() - t:.0f}s")
        cache.mkdir(parents=True, exist_ok=True)
        np.savez(path, **known)
    return np.stack([known[k] for k in keys])


def build(uri: Path, items: list[str], vecs: np.ndarray) -> MemoryStore:
    store = MemoryStore(str(uri))
    store.open(int(vecs.shape[1]))
    for start in range(0, len(items), 10_000):
        store.upsert(
            [
                {
                    "id": f"c{i}",
                    "path": f"memory/daily/{i // 50:05d}.md",
                    "heading": f"entry {i}",
                    "ordinal": 0,
                    "body": items[i],
                    "search_text": items[i],
                    "sha256": "",
                    "line_start": 1,
                    "line_end": 1,
                    "category": "daily",
                    "tags": [],
                    "date": "2026-01-01",
                    "model": "bench",
                    "vector": vecs[i].tolist(),
                }
                for i in range(start, min(start + 10_000, len(items)))
            ]
        )
    store.optimize(timedelta(0))
    return store


def measure(
    store: MemoryStore, emb: Embedder, n: int, cache: VectorCache | None = None
) -> tuple[list[float], list[float], list[float]]:
    """Interleaved per round: the full search as LanceDB runs it, the full search with the
    vectors held in memory (`cache`, when given), then the bare query embedding. Each
    search gets its own query: the embedder caches query vectors."""
    rng = random.Random(11)
    settings = SearchSettings()
    full, held, bare = [], [], []

    def search(query: str, with_cache: VectorCache | None) -> float:
        t = time.perf_counter()
        run_search(
            store,
            emb,
            query,
            k=8,
            mode="hybrid",
            filters=Filters(),
            settings=settings,
            cache=with_cache,
        )
        return time.perf_counter() - t

    for i in range(n + 20):
        q, q2 = (" ".join(rng.choice(VOCAB) for _ in range(4)) for _ in range(2))
        if cache is not None and i % 2:
            c = search(q2, cache)
        a = search(q, None)
        if cache is not None and not i % 2:
            c = search(q2, cache)
        t = time.perf_counter()
        emb.encode([q + " "])
        b = time.perf_counter() - t
        if i >= 20:  # warm-up
            full.append(a)
            bare.append(b)
            if cache is not None:
                held.append(c)
    return full, held, bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10k chunks only")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cache-dir", default="~/.cache/nexusd-bench")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for the query embedding, either runtime (default 1, as the daemon, "
        "which serves plans' and `memory search`'s queries, runs it)",
    )
    args = parser.parse_args()
    set_threads(args.threads)  # before either runtime loads: ONNX reads it at load
    emb = Embedder("all-MiniLM-L6-v2")
    assert emb.load(), emb.error
    # The runtime before ONNX, in the same process and on the same thread count.
    base_emb = torch_embedder() if emb.runtime != "torch" else None
    set_threads(args.threads)
    print(f"query embedding on {emb.runtime}, {args.threads} thread(s); baseline torch")
    base = texts(10_000, 1)
    vecs = embed_cached(emb, base, Path(args.cache_dir).expanduser())
    metrics: dict[str, float] = {}
    sizes = [10_000] if args.quick else [10_000, 100_000]
    with tempfile.TemporaryDirectory(prefix="nexusd-lat-") as tmp:
        for size in sizes:
            if size == len(base):
                items, mat = base, vecs
            else:
                rng = np.random.default_rng(3)
                reps = size // len(base)
                mat = np.concatenate(
                    [vecs]
                    + [
                        vecs + rng.normal(0, 0.02, vecs.shape).astype(np.float32)
                        for _ in range(reps - 1)
                    ]
                )
                mat /= np.linalg.norm(mat, axis=1, keepdims=True)
                items = base + [t for r in range(1, reps) for t in texts(len(base), 1 + r)]
            t = time.perf_counter()
            store = build(Path(tmp) / f"t{size}", items, mat)
            print(f"{size} chunks: table built in {time.perf_counter() - t:.0f}s")
            # As the daemon holds it: past cache_max_rows, or with a vector index, the
            # "in memory" figures are LanceDB's again.
            cache = VectorCache()
            full, held, bare = measure(store, emb, args.queries, cache)
            f, h, b = summary(full), summary(held), summary(bare)
            print(
                f"  hybrid search incl. embedding: p50 {f['median'] * 1000:.1f} ms, "
                f"p99 {f['p99'] * 1000:.1f} ms, max {f['max'] * 1000:.1f} ms (n={f['n']})"
            )
            where = "in memory" if cache.snapshot(store) is not None else "LanceDB: not held"
            print(
                f"  the same, vectors {where}: p50 {h['median'] * 1000:.1f} ms, "
                f"p99 {h['p99'] * 1000:.1f} ms, max {h['max'] * 1000:.1f} ms "
                f"({h['median'] / f['median']:.2f}x)"
            )
            print(
                f"  query embedding alone:         p50 {b['median'] * 1000:.1f} ms, "
                f"p99 {b['p99'] * 1000:.1f} ms"
            )
            label = f"{size // 1000}k"
            metrics[f"held_p50_ms_{label}"] = round(h["median"] * 1000, 2)
            metrics[f"held_p99_ms_{label}"] = round(h["p99"] * 1000, 2)
            indexed = any("vector" in i.columns for i in store.table.list_indices())
            if indexed:  # how much the ANN index loses against an exact scan
                rng2 = random.Random(5)
                qs = [" ".join(rng2.choice(VOCAB) for _ in range(4)) for _ in range(30)]
                found = 0
                for qv in emb.encode(qs):
                    exact = {f"c{i}" for i in np.argsort(-(mat @ qv))[:8]}
                    got = {r["id"] for r in store.vector_search(qv.tolist(), 8, None)}
                    found += len(exact & got)
                metrics[f"ann_recall_at_8_{label}"] = round(found / (8 * len(qs)), 3)
                print(
                    f"  vector index: IVF_HNSW_SQ, recall@8 vs exact scan "
                    f"{found / (8 * len(qs)):.3f}"
                )
            metrics[f"p50_ms_{label}"] = round(f["median"] * 1000, 2)
            metrics[f"p99_ms_{label}"] = round(f["p99"] * 1000, 2)
            metrics[f"max_ms_{label}"] = round(f["max"] * 1000, 2)
            metrics[f"embed_only_p50_ms_{label}"] = round(b["median"] * 1000, 2)
            if base_emb is not None:
                full_t, _, bare_t = measure(store, base_emb, args.queries)
                ft, bt = summary(full_t), summary(bare_t)
                print(
                    f"  torch: hybrid p50 {ft['median'] * 1000:.1f} ms, p99 "
                    f"{ft['p99'] * 1000:.1f} ms; embedding alone p50 {bt['median'] * 1000:.1f} ms,"
                    f" p99 {bt['p99'] * 1000:.1f} ms"
                )
                metrics[f"torch_p50_ms_{label}"] = round(ft["median"] * 1000, 2)
                metrics[f"torch_p99_ms_{label}"] = round(ft["p99"] * 1000, 2)
                metrics[f"torch_embed_only_p50_ms_{label}"] = round(bt["median"] * 1000, 2)
                metrics[f"torch_embed_only_p99_ms_{label}"] = round(bt["p99"] * 1000, 2)
            metrics[f"embed_only_p99_ms_{label}"] = round(b["p99"] * 1000, 2)
    print(
        json.dumps(
            {
                "benchmark": "search_latency",
                "metrics": metrics,
                "samples": args.queries,
                "machine": {**machine(), "threads": args.threads, "runtime": emb.runtime},
            }
        )
    )


if __name__ == "__main__":
    main()
