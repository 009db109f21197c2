"""Vector, keyword and hybrid (RRF) search over the chunks table, with filters and recency."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

from nexusd.config import Config
from nexusd.errors import NexusError
from nexusd.memory.embedder import Embedder
from nexusd.memory.filters import Filters
from nexusd.memory.fusion import rerank_by_recency, rrf, score_fusion
from nexusd.memory.store import MemoryStore
from nexusd.memory.vector_cache import VectorCache, keyword, nearest

MODES = ("hybrid", "vector", "keyword")
SNIPPET_CHARS = 240
_WORD = re.compile(r"\w{3,}")
# Keyword searches of one batch that run at once (each mostly waits on LanceDB).
KEYWORD_WORKERS = 4


@dataclass(frozen=True)
class SearchSettings:
    """Fusion parameters (from `memory.search.*`)."""

    fusion: str = "score"
    rrf_k: float = 60.0
    vector_weight: float = 0.75
    keyword_weight: float = 0.25
    depth: int = 100
    vector_norm: str = "none"
    keyword_norm: str = "max"
    floor_missing: bool = True
    recency_half_life_days: float | None = None

    @classmethod
    def from_config(cls, config: Config) -> SearchSettings:
        """Read `memory.search.*`."""
        s = config.memory.search
        return cls(
            fusion=s.fusion,
            rrf_k=float(s.rrf_k),
            vector_weight=s.vector_weight,
            keyword_weight=s.keyword_weight,
            depth=s.depth,
            vector_norm=s.vector_norm,
            keyword_norm=s.keyword_norm,
            floor_missing=s.floor_missing,
            recency_half_life_days=s.recency_half_life_days,
        )


@dataclass(frozen=True)
class SearchHit:
    """One result: where it is, what it says, how well and by whom it was found."""

    path: str
    line_start: int
    line_end: int
    heading: str
    snippet: str
    score: float
    retrievers: tuple[str, ...]
    category: str = ""
    date: str = ""
    tags: tuple[str, ...] = ()
    id: str = ""  # the chunk's id in the index (`path#heading path#ordinal`)

    @property
    def citation(self) -> str:
        """`path:line` as plans and the CLI cite it."""
        return f"{self.path}:{self.line_start}"


@dataclass(frozen=True)
class SearchResults:
    """Hits for one query, the mode actually used, and a note when degraded."""

    query: str
    mode: str
    hits: tuple[SearchHit, ...]
    note: str | None = None
    elapsed_ms: float = 0.0
    retrievers_used: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for `--json`, the socket and `--queries`)."""
        data = asdict(self)
        data["hits"] = [{**asdict(h), "citation": h.citation} for h in self.hits]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchResults:
        """Inverse of to_dict."""
        hits = tuple(
            SearchHit(
                **{
                    **{k: v for k, v in h.items() if k != "citation"},
                    "retrievers": tuple(h["retrievers"]),
                    "tags": tuple(h.get("tags", ())),
                }
            )
            for h in data["hits"]
        )
        return cls(
            query=data["query"],
            mode=data["mode"],
            hits=hits,
            note=data.get("note"),
            elapsed_ms=float(data.get("elapsed_ms", 0.0)),
            retrievers_used=tuple(data.get("retrievers_used", ())),
        )


def snippet(body: str, query: str, limit: int = SNIPPET_CHARS) -> str:
    """A one-line excerpt of `body`, centred on the first query word it contains."""
    flat = " ".join(body.split())
    if len(flat) <= limit:
        return flat
    lower = flat.lower()
    positions = [lower.find(w.lower()) for w in _WORD.findall(query)]
    pos = min((p for p in positions if p >= 0), default=0)
    start = max(0, min(pos - limit // 3, len(flat) - limit))
    text = flat[start : start + limit]
    return ("…" if start else "") + text + ("…" if start + limit < len(flat) else "")


def run_search(
    store: MemoryStore,
    embedder: Embedder | None,
    query: str,
    *,
    k: int,
    mode: str,
    filters: Filters,
    settings: SearchSettings,
    today: date | None = None,
    cache: VectorCache | None = None,
) -> SearchResults:
    """Search the index; without a ready model, fall back to keyword and say why."""
    (found,) = run_searches(
        store,
        embedder,
        [(query, k)],
        mode=mode,
        filters=filters,
        settings=settings,
        today=today,
        cache=cache,
    )
    return found


def run_searches(
    store: MemoryStore,
    embedder: Embedder | None,
    queries: Sequence[tuple[str, int]],
    *,
    mode: str,
    filters: Filters,
    settings: SearchSettings,
    today: date | None = None,
    cache: VectorCache | None = None,
) -> list[SearchResults]:
    """Several searches at once: one embedding batch and one vector scan for all of them,
    the keyword searches beside it. Results come in the order of `queries`. With a
    `cache`, the vectors are searched in memory when the table is small enough."""
    if mode not in MODES:
        raise NexusError(f"unknown search mode {mode!r}", hint="use hybrid, vector or keyword")
    started = time.perf_counter()
    note = None
    want_vector = mode in ("hybrid", "vector")
    if want_vector and (embedder is None or not embedder.ready):
        why = "not configured" if embedder is None else embedder.status
        if embedder is not None and embedder.error:
            why += f": {embedder.error}"
        note = f"embedding model {why}; keyword search only"
        want_vector, mode_used = False, "keyword"
    else:
        mode_used = mode
    want_keyword = mode_used in ("hybrid", "keyword")
    where = filters.where()
    depths = [max(settings.depth, k) if mode_used == "hybrid" else k for _, k in queries]
    if filters.path_glob:
        depths = [d * 4 for d in depths]
    asked = [i for i, (query, _) in enumerate(queries) if query.strip()]
    ranked: list[dict[str, list[tuple[str, float]]]] = [{} for _ in queries]
    rows: list[dict[str, dict[str, Any]]] = [{} for _ in queries]
    # Retrievers whose list was cut at the depth (more matches than were asked for).
    cut: list[set[str]] = [set() for _ in queries]
    # LanceDB and torch both work outside the GIL: the keyword searches run while the
    # queries are embedded and the vector index is scanned.
    workers = max(1, min(len(asked), KEYWORD_WORKERS))
    snap = cache.snapshot(store) if cache is not None and asked else None
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nexusd-keyword") as side:
        matches = {
            i: side.submit(keyword, store, snap, queries[i][0], depths[i], where)
            for i in (asked if want_keyword else [])
        }
        if want_vector and asked:
            assert embedder is not None
            vectors = embedder.encode_queries([queries[i][0] for i in asked])
            depth = max(depths[i] for i in asked)
            found = nearest(store, snap, vectors, depth, filters)
            for i, hits in zip(asked, found, strict=True):
                if len(hits) >= depths[i]:
                    cut[i].add("vector")
                kept = [r for r in hits[: depths[i]] if filters.keep(r["path"])]
                ranked[i]["vector"] = [(r["id"], 1.0 - float(r["_distance"])) for r in kept]
                rows[i].update((r["id"], r) for r in kept)
        for i, future in matches.items():
            hits = future.result()
            if len(hits) >= depths[i]:
                cut[i].add("keyword")
            kept = [r for r in hits if filters.keep(r["path"])]
            ranked[i]["keyword"] = [(r["id"], float(r["_score"])) for r in kept]
            for r in kept:
                rows[i].setdefault(r["id"], r)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    return [
        SearchResults(
            query,
            mode_used,
            rank(
                query,
                k,
                mode=mode_used,
                ranked=ranked[i],
                rows=rows[i],
                cut=cut[i],
                settings=settings,
                today=today or date.today(),
            ),
            note,
            elapsed,
            tuple(ranked[i]),
        )
        for i, (query, k) in enumerate(queries)
    ]


def rank(
    query: str,
    k: int,
    *,
    mode: str,
    ranked: dict[str, list[tuple[str, float]]],
    rows: dict[str, dict[str, Any]],
    cut: set[str],
    settings: SearchSettings,
    today: date,
) -> tuple[SearchHit, ...]:
    """The top `k` hits of one query from each retriever's ranking (fused when hybrid);
    `cut` names the retrievers whose list stopped at the depth, not at the last match."""
    weights = {"vector": settings.vector_weight, "keyword": settings.keyword_weight}
    if mode == "hybrid":
        if settings.fusion == "rrf":
            ids = {name: [i for i, _ in pairs] for name, pairs in ranked.items()}
            fused = rrf(ids, k=settings.rrf_k, weights=weights)
        else:
            norms = {"vector": settings.vector_norm, "keyword": settings.keyword_norm}
            floor = {name: settings.floor_missing and name in cut for name in ranked}
            fused = score_fusion(ranked, weights=weights, norm=norms, floor=floor)
        scored = [(f.id, f.score) for f in fused]
        found_by = {f.id: f.retrievers for f in fused}
    else:
        scored = ranked.get(mode, [])
        found_by = {i: (mode,) for i, _ in scored}
    dates = {i: str(r["date"]) for i, r in rows.items()}
    scored = rerank_by_recency(scored, dates, today, settings.recency_half_life_days)
    return tuple(
        SearchHit(
            path=rows[i]["path"],
            line_start=int(rows[i]["line_start"]),
            line_end=int(rows[i]["line_end"]),
            heading=rows[i]["heading"],
            snippet=snippet(rows[i]["body"], query),
            score=round(score, 6),
            retrievers=found_by[i],
            category=rows[i]["category"],
            date=rows[i]["date"],
            tags=tuple(rows[i]["tags"] or ()),
            id=str(rows[i]["id"]),
        )
        for i, score in scored[:k]
    )
