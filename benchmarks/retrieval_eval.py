"""Retrieval quality of nexusd memory search on BEIR data (SciFact, Cranfield).

nDCG@10 and recall@10 for vector, keyword and hybrid retrieval through nexusd's
own store (LanceDB table, native FTS) and fusion code, with the packaged
all-MiniLM-L6-v2. Variants (fusion depth, RRF k and weights, score fusion,
title handling, passage chunking of long documents) are TUNED ON SCIFACT TRAIN
ONLY; the chosen variant is then reported on SciFact test and on Cranfield,
which are never used for choosing.

    python benchmarks/retrieval_eval.py            # full run
    python benchmarks/retrieval_eval.py --quick    # 150 train queries, small corpus slice

Documents are embedded as nexusd embeds a memory chunk: a document longer than
`chunking.WINDOW_WORDS` is the mean of its half-overlapping windows
(`chunking.embed_windows`, `embedder.mean_vectors`); rows "first window only" show
the model reading only its first 256 word pieces, as nexusd did before. The model's
output is cached per text by content hash under --cache-dir (default
~/.cache/nexusd-bench), so reruns skip the expensive part.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from _memory_common import machine, shared_dir

from nexusd.memory.chunking import embed_text, embed_windows
from nexusd.memory.embedder import Embedder, mean_vectors
from nexusd.memory.fusion import rrf, score_fusion
from nexusd.memory.search import SearchSettings
from nexusd.memory.store import MemoryStore

DEPTH = 100

Ranked = list[tuple[str, float]]  # (doc id, raw score), best first


def load_beir(folder: Path) -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, Any]]:
    """corpus, queries and {split: {qid: {doc: grade}}}."""
    corpus_path = folder / "corpus.jsonl"
    opener: Callable[..., Any] = open
    if not corpus_path.exists():
        corpus_path, opener = folder / "corpus.jsonl.gz", gzip.open
    with opener(corpus_path, "rt", encoding="utf-8") as fh:
        corpus = {
            d["_id"]: {"title": d.get("title", ""), "text": d.get("text", "")}
            for d in map(json.loads, fh)
        }
    with (folder / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = {q["_id"]: q["text"] for q in map(json.loads, fh)}
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for split_file in sorted((folder / "qrels").glob("*.tsv")):
        split: dict[str, dict[str, int]] = {}
        for line in split_file.read_text(encoding="utf-8").splitlines()[1:]:
            qid, did, score = line.split("\t")
            if int(score) > 0:
                split.setdefault(qid, {})[did] = int(score)
        qrels[split_file.stem] = split
    return corpus, queries, qrels


def ndcg_recall(ranked: list[str], rel: dict[str, int], k: int = 10) -> tuple[float, float]:
    """nDCG@k (gain = grade, log2 discount) and recall@k for one query."""
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    hits = sum(1 for d in ranked[:k] if d in rel)
    return (dcg / idcg if idcg else 0.0), hits / len(rel)


def evaluate(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> tuple[float, float]:
    """Mean nDCG@10 and recall@10 over the judged queries."""
    scores = [ndcg_recall(run.get(q, []), rel) for q, rel in qrels.items()]
    return (
        sum(s[0] for s in scores) / len(scores),
        sum(s[1] for s in scores) / len(scores),
    )


def paired_interval(
    a: dict[str, list[str]], b: dict[str, list[str]], qrels: dict[str, dict[str, int]]
) -> tuple[float, float]:
    """95% paired bootstrap interval of mean nDCG@10(a) - nDCG@10(b) (2,000 resamples)."""
    diffs = [
        ndcg_recall(a.get(q, []), r)[0] - ndcg_recall(b.get(q, []), r)[0] for q, r in qrels.items()
    ]
    rng = random.Random(11)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(2000))
    return means[49], means[1949]


_CACHE: dict[str, np.ndarray] = {}


def embed_cached(emb: Embedder, texts: list[str], cache_dir: Path, tag: str) -> np.ndarray:
    """Embeddings of `texts`, cached on disk per text by sha256 (like nexusd's own index)."""
    path = cache_dir / f"{hashlib.sha256(emb.spec.encode()).hexdigest()[:12]}.npz"
    if not _CACHE and path.exists():
        with np.load(path) as data:
            _CACHE.update({k: data[k] for k in data.files})
    keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
    need = list(dict.fromkeys(k for k in keys if k not in _CACHE))
    if need:
        started = time.perf_counter()
        by_key = dict(zip(keys, texts, strict=True))
        for k, v in zip(need, emb.encode([by_key[k] for k in need]), strict=True):
            _CACHE[k] = v
        took = time.perf_counter() - started
        print(
            f"  embedded {len(need)} {tag} texts in {took:.1f}s ({len(texts) - len(need)} cached)"
        )
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.savez(path, **_CACHE)
    return np.stack([_CACHE[k] for k in keys])


def build(
    store_dir: Path,
    name: str,
    ids: list[str],
    doc_of: list[str],
    texts: list[str],
    vecs: np.ndarray,
) -> MemoryStore:
    """A nexusd chunks table holding one row per unit (path = the BEIR doc id)."""
    store = MemoryStore(str(store_dir / name))
    store.open(int(vecs.shape[1]))
    rows = [
        {
            "id": uid,
            "path": doc,
            "heading": "",
            "ordinal": 0,
            "body": text,
            "search_text": text,
            "sha256": "",
            "line_start": 1,
            "line_end": 1,
            "category": "",
            "tags": [],
            "date": "2026-01-01",
            "model": "bench",
            "vector": vec,
        }
        for uid, doc, text, vec in zip(ids, doc_of, texts, vecs.tolist(), strict=True)
    ]
    for i in range(0, len(rows), 5000):
        store.upsert(rows[i : i + 5000])
    store.optimize(timedelta(0))
    return store


def doc_ranking(rows: list[dict[str, Any]], score_key: str, *, distance: bool) -> Ranked:
    """Collapse unit hits to documents (max score per document), best first."""
    best: dict[str, float] = {}
    for r in rows:
        s = 1.0 - float(r[score_key]) if distance else float(r[score_key])
        if r["path"] not in best or s > best[r["path"]]:
            best[r["path"]] = s
    return sorted(best.items(), key=lambda p: -p[1])


def retrieve(
    store: MemoryStore,
    qvecs: dict[str, list[float]],
    queries: dict[str, str],
    depth: int,
    keyword: bool = True,
) -> tuple[dict[str, Ranked], dict[str, Ranked]]:
    """Vector and keyword rankings of documents for every query."""
    vec: dict[str, Ranked] = {}
    kw: dict[str, Ranked] = {}
    for qid, text in queries.items():
        vec[qid] = doc_ranking(
            store.vector_search(qvecs[qid], depth, None), "_distance", distance=True
        )
        if keyword:
            kw[qid] = doc_ranking(store.keyword_search(text, depth, None), "_score", distance=False)
    return vec, kw


def fuse_rrf(
    runs: dict[str, dict[str, Ranked]], k: float, weights: dict[str, float], depth: int
) -> dict[str, list[str]]:
    """nexusd's weighted RRF over the top `depth` of each retriever."""
    qids = next(iter(runs.values())).keys()
    return {
        q: [
            f.id
            for f in rrf(
                {n: [d for d, _ in r[q][:depth]] for n, r in runs.items()}, k=k, weights=weights
            )
        ][:10]
        for q in qids
    }


def fuse_scores(
    runs: dict[str, dict[str, Ranked]],
    weights: dict[str, float],
    depth: int,
    norm: str | dict[str, str] = "max",
    floor: bool = False,
) -> dict[str, list[str]]:
    """nexusd's score fusion (normalised per retriever, weighted) over the top `depth`."""
    qids = next(iter(runs.values())).keys()
    return {
        q: [
            f.id
            for f in score_fusion(
                {n: r[q][:depth] for n, r in runs.items()},
                weights=weights,
                norm=norm,
                # As the product: only a list cut at the depth floors its missing documents.
                floor={n: floor and len(r[q]) >= depth for n, r in runs.items()},
            )
        ][:10]
        for q in qids
    }


def product_default(runs: dict[str, dict[str, Ranked]]) -> dict[str, list[str]]:
    """Hybrid exactly as `memory.search` defaults configure run_search's fusion."""
    s = SearchSettings()
    if s.fusion == "rrf":
        return fuse_rrf(
            runs, s.rrf_k, {"vector": s.vector_weight, "keyword": s.keyword_weight}, s.depth
        )
    return fuse_scores(
        runs,
        {"vector": s.vector_weight, "keyword": s.keyword_weight},
        s.depth,
        {"vector": s.vector_norm, "keyword": s.keyword_norm},
        s.floor_missing,
    )


def top(run: dict[str, Ranked]) -> dict[str, list[str]]:
    """A single retriever's top 10."""
    return {q: [d for d, _ in r[:10]] for q, r in run.items()}


def prepare(
    name: str, folder: Path, emb: Embedder, args: argparse.Namespace, work: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Index one dataset two ways (whole docs, passages) and retrieve for every judged query."""
    corpus, queries, qrels = load_beir(folder)
    judged = {q for split in qrels.values() for q in split}
    if args.quick:
        rng = random.Random(7)
        train = sorted(qrels.get("train", qrels.get("test", {})))
        keep_q = set(rng.sample(train, min(100, len(train))))
        qrels = {s: {q: r for q, r in rel.items() if q in keep_q} for s, rel in qrels.items()}
        needed = {d for rel in qrels.values() for r in rel.values() for d in r}
        others = rng.sample(sorted(set(corpus) - needed), min(300, len(corpus) - len(needed)))
        corpus = {d: corpus[d] for d in sorted(needed | set(others))}
        judged = keep_q
    queries = {q: t for q, t in queries.items() if q in judged}
    print(f"{name}: {len(corpus)} docs, {len(queries)} judged queries")
    cache = Path(args.cache_dir).expanduser()
    doc_ids = list(corpus)
    # Title handling: nexusd embeds and indexes `heading\n\nbody`; the title is the heading.
    with_title = [embed_text(corpus[d]["title"], corpus[d]["text"]) for d in doc_ids]
    body_only = [corpus[d]["text"] or corpus[d]["title"] for d in doc_ids]
    qids = list(queries)
    qv = embed_cached(emb, [queries[q] for q in qids], cache, f"{name}-queries")
    qvecs = {q: v.tolist() for q, v in zip(qids, qv, strict=True)}
    runs: dict[str, Any] = {}
    # As nexusd embeds a chunk: a long document is the mean of its windows.
    windows = [embed_windows(corpus[d]["title"], corpus[d]["text"]) for d in doc_ids]
    flat = [w for group in windows for w in group]
    vecs = mean_vectors(embed_cached(emb, flat, cache, f"{name}-windows"), list(map(len, windows)))
    store = build(work, f"{name}-docs", doc_ids, doc_ids, with_title, vecs)
    runs["vector"], runs["keyword"] = retrieve(store, qvecs, queries, DEPTH)
    # Before windows (nexusd < 2026-11-22): the model's first 256 word pieces only.
    cut = embed_cached(emb, with_title, cache, f"{name}-docs")
    store_cut = build(work, f"{name}-cut", doc_ids, doc_ids, with_title, cut)
    runs["vector_cut"], _ = retrieve(store_cut, qvecs, queries, DEPTH, keyword=False)
    # Pseudo-relevance feedback: move the query vector towards the top 3 documents of the
    # hybrid (score fusion) ranking, then search again (one more vector search per query).
    row = {d: i for i, d in enumerate(doc_ids)}
    first = fuse_scores(
        {"vector": runs["vector"], "keyword": runs["keyword"]},
        {"vector": 0.5, "keyword": 0.5},
        DEPTH,
        "max",
    )
    prf_vecs = {}
    for q in qids:
        fb = np.mean([vecs[row[d]] for d in first[q][:3]], axis=0) if first[q] else 0.0
        v = np.asarray(qvecs[q]) + 0.7 * fb
        prf_vecs[q] = (v / np.linalg.norm(v)).tolist()
    runs["vector_prf"], _ = retrieve(store, prf_vecs, dict.fromkeys(qids, ""), DEPTH, keyword=False)
    if args.title_variants:
        vb = embed_cached(emb, body_only, cache, f"{name}-body")
        store = build(work, f"{name}-body", doc_ids, doc_ids, body_only, vb)
        runs["vector_body"], runs["keyword_body"] = retrieve(store, qvecs, queries, DEPTH)
    if not args.passages:
        return runs, qrels
    units: list[tuple[str, str, str]] = []
    for d in doc_ids:
        # nexusd's windows, as separate rows instead of one mean vector
        for i, text in enumerate(embed_windows(corpus[d]["title"], corpus[d]["text"])):
            units.append((f"{d}#{i}", d, text))
    pv = embed_cached(emb, [u[2] for u in units], cache, f"{name}-passages")
    store = build(
        work,
        f"{name}-passages",
        [u[0] for u in units],
        [u[1] for u in units],
        [u[2] for u in units],
        pv,
    )
    runs["vector_passages"], runs["keyword_passages"] = retrieve(store, qvecs, queries, DEPTH * 3)
    # Whole-document and passage vectors together: the better of the two per document.
    runs["vector_maxdoc"] = {
        q: sorted(
            {
                **dict(runs["vector_passages"][q]),
                **{
                    d: max(s, dict(runs["vector_passages"][q]).get(d, -1.0))
                    for d, s in runs["vector"][q]
                },
            }.items(),
            key=lambda p: -p[1],
        )
        for q in qids
    }
    return runs, qrels


def variants(runs: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Every fusion variant measured: name → run (top 10 per query)."""
    out: dict[str, dict[str, list[str]]] = {
        "vector": top(runs["vector"]),
        "keyword": top(runs["keyword"]),
    }
    if "vector_passages" in runs:
        out["vector_passages(max)"] = top(runs["vector_passages"])
        out["vector_doc+passages(max)"] = top(runs["vector_maxdoc"])
    if "vector_body" in runs:
        out["vector_no_title"] = top(runs["vector_body"])
        out["keyword_no_title"] = top(runs["keyword_body"])
    pair = {"vector": runs["vector"], "keyword": runs["keyword"]}
    for depth in (20, 50, 100):
        for k in (10, 30, 60):
            for kw in (1.0, 1.5, 2.0):
                out[f"rrf depth={depth} k={k} w_kw={kw}"] = fuse_rrf(
                    pair, k, {"vector": 1.0, "keyword": kw}, depth
                )
    for norm in ("minmax", "max", "zscore"):
        for alpha in (0.3, 0.4, 0.5, 0.6, 0.7):
            for depth in (20, 50, 100):
                out[f"score/{norm} depth={depth} w_vec={alpha}"] = fuse_scores(
                    pair, {"vector": alpha, "keyword": 1 - alpha}, depth, norm
                )
    # Per-retriever normalisation: cosine similarity has a fixed scale, BM25 does not;
    # `floor` scores a document missing from one list at that list's lowest score.
    for vnorm in ("none", "max"):
        for floor in (False, True):
            for alpha in (0.5, 0.6, 0.7, 0.75, 0.8):
                tag = f"vec={vnorm},kw=max{',floor' if floor else ''}"
                out[f"score/{tag} depth=100 w_vec={alpha}"] = fuse_scores(
                    pair,
                    {"vector": alpha, "keyword": round(1 - alpha, 2)},
                    100,
                    {"vector": vnorm, "keyword": "max"},
                    floor,
                )
    out["product default"] = product_default(pair)
    out["vector, first window only"] = top(runs["vector_cut"])
    out["product default, first window only"] = product_default(
        {"vector": runs["vector_cut"], "keyword": runs["keyword"]}
    )
    if "vector_prf" in runs:
        prf = {"vector": runs["vector_prf"], "keyword": runs["keyword"]}
        out["vector_prf"] = top(runs["vector_prf"])
        for norm in ("minmax", "max", "zscore"):
            for alpha in (0.4, 0.5, 0.6):
                out[f"score/{norm}+prf depth=100 w_vec={alpha}"] = fuse_scores(
                    prf, {"vector": alpha, "keyword": 1 - alpha}, 100, norm
                )
    if "vector_maxdoc" not in runs:
        return out
    rich = {"vector": runs["vector_maxdoc"], "keyword": runs["keyword"]}
    for k in (10, 30, 60):
        for kw in (1.0, 1.5):
            out[f"rrf+passages depth=100 k={k} w_kw={kw}"] = fuse_rrf(
                rich, k, {"vector": 1.0, "keyword": kw}, 100
            )
    for alpha in (0.4, 0.5, 0.6):
        for norm in ("minmax", "max"):
            out[f"score/{norm}+passages depth=100 w_vec={alpha}"] = fuse_scores(
                rich, {"vector": alpha, "keyword": 1 - alpha}, 100, norm
            )
    # Passages under the product's own fusion settings, which the rows above do not use:
    # what chunking long docs would give if nexusd's search kept its defaults.
    out["product default+passages(vector doc+passages)"] = product_default(rich)
    out["product default+passages(both passages)"] = product_default(
        {"vector": runs["vector_passages"], "keyword": runs["keyword_passages"]}
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small slice, under a minute")
    parser.add_argument("--data", default=None, help="eval-data folder (default ../shared)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache-dir", default="~/.cache/nexusd-bench")
    parser.add_argument(
        "--passages",
        action="store_true",
        help="also index ~120-word passages of long docs (slow: ~3x the embeds)",
    )
    parser.add_argument(
        "--title-variants",
        action="store_true",
        help="also index bodies without titles (slow: 2x the embeds)",
    )
    args = parser.parse_args()
    data = Path(args.data) if args.data else shared_dir() / "eval-data"
    started = time.perf_counter()
    emb = Embedder(args.model, batch_size=32)
    if not emb.load():
        sys.exit(f"model unavailable: {emb.error}")
    metrics: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="nexusd-eval-") as tmp:
        runs, qrels = prepare("scifact", data / "scifact", emb, args, Path(tmp))
        train = qrels["train"]
        all_runs = variants(runs)
        table = {name: evaluate(run, train) for name, run in all_runs.items()}
        print("\nSciFact TRAIN (tuning split)                    nDCG@10  recall@10")
        for name, (nd, rc) in table.items():
            print(f"  {name:<44} {nd:.4f}   {rc:.4f}")
        # Only variants nexusd's search implements can be chosen (passages are measured only).
        fused = {
            n: v for n, v in table.items() if n.startswith(("rrf depth", "score/")) and "+" not in n
        }
        best = max(fused, key=lambda n: fused[n][0])
        overall = max(table, key=lambda n: table[n][0])
        lo, hi = paired_interval(
            all_runs["product default"], all_runs["product default, first window only"], train
        )
        gain = table["product default"][0] - table["product default, first window only"][0]
        print(
            f"\nwindows' gain on train: {gain:+.4f} nDCG@10 (95% paired bootstrap {lo:+.4f}"
            f" .. {hi:+.4f})"
        )
        print(f"best of all variants on train: {overall} ({table[overall][0]:.4f})")
        print(f"chosen on train (implemented in nexusd search): {best}")
        print(f"  nDCG@10 {fused[best][0]:.4f}")
        metrics.update(
            {
                "scifact_train_vector_ndcg10": round(table["vector"][0], 4),
                "scifact_train_keyword_ndcg10": round(table["keyword"][0], 4),
                "scifact_train_hybrid_rrf_ndcg10": round(table["rrf depth=50 k=60 w_kw=1.0"][0], 4),
                "scifact_train_hybrid_default_ndcg10": round(table["product default"][0], 4),
                "scifact_train_hybrid_default_first_window_ndcg10": round(
                    table["product default, first window only"][0], 4
                ),
                "scifact_train_hybrid_best_ndcg10": round(fused[best][0], 4),
            }
        )
        reports = [("scifact", "test", runs, qrels.get("test", {}))]
        if not args.quick:
            cruns, cqrels = prepare("cranfield", data / "cranfield", emb, args, Path(tmp))
            reports.append(("cranfield", "test", cruns, cqrels["test"]))
        for name, split, rruns, rel in reports:
            if not rel:
                continue
            chosen = variants(rruns)
            print(f"\n{name} {split.upper()} (reporting only)                 nDCG@10  recall@10")
            for label, key in (
                ("vector", "vector"),
                ("keyword", "keyword"),
                ("hybrid rrf k=60", "rrf depth=50 k=60 w_kw=1.0"),
                ("hybrid product default", "product default"),
                ("hybrid default, first window only", "product default, first window only"),
                (f"hybrid chosen: {best}", best),
            ):
                nd, rc = evaluate(chosen[key], rel)
                print(f"  {label:<44} {nd:.4f}   {rc:.4f}")
                tags = {
                    "hybrid rrf k=60": "hybrid_rrf",
                    "hybrid product default": "hybrid_default",
                    "hybrid default, first window only": "hybrid_default_first_window",
                }
                tag = (
                    "hybrid_chosen" if label.startswith("hybrid chosen") else tags.get(label, label)
                )
                metrics[f"{name}_{split}_{tag}_ndcg10"] = round(nd, 4)
                metrics[f"{name}_{split}_{tag}_recall10"] = round(rc, 4)
    print(f"\ntotal {time.perf_counter() - started:.0f}s")
    print(
        json.dumps(
            {
                "benchmark": "retrieval_eval",
                "metrics": metrics,
                "chosen_variant": best,
                "samples": len(train),
                "machine": machine(),
            }
        )
    )


if __name__ == "__main__":
    main()
