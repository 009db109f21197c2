"""Vectors held in memory: the same hits, in the same order, as LanceDB's own search."""

from __future__ import annotations

import copy
import random
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from nexusd.memory.embedder import Embedder
from nexusd.memory.filters import Filters
from nexusd.memory.search import SearchSettings, run_searches
from nexusd.memory.store import MemoryStore
from nexusd.memory.vector_cache import VectorCache, keyword, nearest

pytestmark = pytest.mark.model

TOPICS = (
    "the login test flaked because two workers shared one sqlite file",
    "install the CPU build of torch first to avoid CUDA wheels",
    "we store embeddings in LanceDB because it runs embedded",
    "error messages must tell the user what to do next",
    "the daemon restarts cleanly after a crash of the watcher",
    "cache pip downloads to speed up continuous integration",
    "rotate the API tokens every quarter and never commit them",
    "the release checklist runs the migrations before deploying",
)
CATEGORIES = ("lessons", "decisions", "preferences", "security", "daily", None)
QUERIES = (
    "why did a test fail intermittently",
    "GPU libraries downloaded when setting up",
    "which vector database did we pick",
    "secrets handling",
    "faster CI",
    "daemon crash recovery",
)
FILTERS = (
    Filters(),
    Filters(category="Lessons"),
    Filters(categories=("lessons", "daily")),
    Filters(categories=()),
    Filters(hidden_categories=("security", "preferences")),
    Filters(since="2026-01-10", until="2026-02-20"),
    Filters(path_glob="memory/daily/2026-01-*.md"),
    Filters(path_glob="notes/**", hidden_categories=("security",)),
)


def chunk_rows(embedder: Embedder, count: int, seed: int) -> list[dict[str, Any]]:
    """`count` chunks mixing the topics, spread over categories, dates and folders; every
    seventh still pending (a zero vector, no model), as the syncer leaves them."""
    rng = random.Random(seed)
    texts = [
        f"{rng.choice(TOPICS)}; also {rng.choice(TOPICS).split()[-3]} note {seed}-{i}"
        for i in range(count)
    ]
    vectors = embedder.encode(texts)
    rows = []
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        day = date(2026, 1 + i % 3, 1 + i % 28).isoformat()
        folder = "memory/daily" if i % 2 else "notes/team"
        pending = i % 7 == 3
        rows.append(
            {
                "id": f"c{seed}-{i}",
                "path": f"{folder}/{day}.md" if i % 5 else "MEMORY.md",
                "heading": f"entry {i}",
                "ordinal": 0,
                "body": text,
                "search_text": text,
                "sha256": "",
                "line_start": i + 1,
                "line_end": i + 2,
                "category": CATEGORIES[i % len(CATEGORIES)],
                "tags": ["t"] if i % 3 else [],
                "date": day if i % 11 else None,
                "model": "" if pending else embedder.tag,
                "vector": [0.0] * len(vector) if pending else vector.tolist(),
            }
        )
    return rows


@pytest.fixture(scope="module")
def table_rows(embedder: Embedder) -> list[dict[str, Any]]:
    """The chunks of every test's table, embedded once."""
    return chunk_rows(embedder, 240, 1)


@pytest.fixture
def store(tmp_path: Path, embedder: Embedder, table_rows: list[dict[str, Any]]) -> MemoryStore:
    store = MemoryStore(str(tmp_path / "index"))
    store.open(embedder.dim)
    store.upsert(copy.deepcopy(table_rows))
    return store


def test_in_memory_hits_equal_lancedb_hits_under_every_filter(
    store: MemoryStore, embedder: Embedder
) -> None:
    cache = VectorCache()
    vectors = embedder.encode_queries(list(QUERIES))
    for filters in FILTERS:
        for limit in (5, 100, 1000):
            lance = nearest(store, None, vectors, limit, filters)
            held = nearest(store, cache.snapshot(store), vectors, limit, filters)
            for want, got in zip(lance, held, strict=True):
                assert [r["id"] for r in got] == [r["id"] for r in want], (filters, limit)
                for a, b in zip(want, got, strict=True):
                    assert b["_distance"] == pytest.approx(a["_distance"], abs=1e-5)
                    assert {k: v for k, v in b.items() if k != "_distance"} == {
                        k: v for k, v in a.items() if k != "_distance"
                    }
    snap = cache.snapshot(store)
    assert snap is not None and snap.rows == 240


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_searches_rank_the_same_with_and_without_the_cache(
    store: MemoryStore, embedder: Embedder, fusion: str
) -> None:
    settings = SearchSettings(fusion=fusion, recency_half_life_days=30.0)
    queries = [(q, 8) for q in QUERIES]
    cache = VectorCache()
    for mode in ("hybrid", "vector", "keyword"):
        for filters in FILTERS:
            args: dict[str, Any] = {"mode": mode, "filters": filters, "settings": settings}
            args["today"] = date(2026, 3, 1)
            lance = run_searches(store, embedder, queries, **args)
            held = run_searches(store, embedder, queries, cache=cache, **args)
            for want, got in zip(lance, held, strict=True):
                assert [h.id for h in got.hits] == [h.id for h in want.hits], (mode, filters)
                assert [h.score for h in got.hits] == pytest.approx(
                    [h.score for h in want.hits], abs=1e-5
                )
                assert got.retrievers_used == want.retrievers_used


def test_a_write_is_seen_by_the_next_search(store: MemoryStore, embedder: Embedder) -> None:
    cache = VectorCache()
    query = embedder.encode_queries(["a penguin colony on the ice shelf"])
    first = cache.snapshot(store)
    assert cache.snapshot(store) is first  # unchanged table: the same snapshot
    row = chunk_rows(embedder, 1, 9)[0]
    text = "penguins huddle together on the antarctic ice shelf"
    row.update(id="penguin", body=text, search_text=text, model=embedder.tag)
    row["vector"] = embedder.encode([text])[0].tolist()
    store.upsert([row])
    assert nearest(store, cache.snapshot(store), query, 1, Filters())[0][0]["id"] == "penguin"
    assert cache.snapshot(store) is not first
    store.delete_ids(["penguin"])
    assert nearest(store, cache.snapshot(store), query, 1, Filters())[0][0]["id"] != "penguin"
    # After a write, refresh() reads the new version before any search asks for it.
    before = cache.snapshot(store)
    store.upsert([row])
    cache.refresh(store)
    after = cache.snapshot(store)
    assert after is not before and after is not None and after.rows == 241


def test_tables_past_the_limit_are_searched_by_lancedb(
    store: MemoryStore, embedder: Embedder
) -> None:
    args: dict[str, Any] = {"mode": "hybrid", "filters": Filters(), "settings": SearchSettings()}
    (lance,) = run_searches(store, embedder, [("faster CI", 5)], **args)
    for cache in (VectorCache(max_rows=100), VectorCache(max_rows=0)):
        assert cache.snapshot(store) is None
        (found,) = run_searches(store, embedder, [("faster CI", 5)], cache=cache, **args)
        assert found.hits == lance.hits
        cache.refresh(store)  # nothing held: nothing read
        assert cache.snapshot(store) is None


def test_keyword_hits_read_from_memory_equal_lancedb_rows(
    store: MemoryStore, embedder: Embedder
) -> None:
    snap = VectorCache().snapshot(store)
    where = Filters(hidden_categories=("security",)).where()
    for text in QUERIES:
        assert keyword(store, snap, text, 50, where) == store.keyword_search(text, 50, where)
    # A chunk written after the snapshot was read: its row comes from the table.
    row = copy.deepcopy(chunk_rows(embedder, 1, 9)[0])
    row.update(id="fresh", body="zeppelin hangar", search_text="zeppelin hangar")
    store.upsert([row])
    hits = keyword(store, snap, "zeppelin", 5, None)
    assert [h["id"] for h in hits] == ["fresh"] and hits[0]["body"] == "zeppelin hangar"


def test_an_empty_table_is_held_and_searched_without_a_warning(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    # A fresh repository: MEMORY.md's template prose is not indexed, so the table is empty.
    store = MemoryStore(str(tmp_path / "index"))
    store.open(embedder.dim)
    cache = VectorCache()
    snap = cache.snapshot(store)
    assert snap is not None and snap.rows == 0 and snap.matrix.shape == (0, embedder.dim)
    query = embedder.encode_queries(["a penguin colony"])
    assert nearest(store, snap, query, 5, Filters()) == nearest(store, None, query, 5, Filters())
    assert "could not be read" not in caplog.text
