"""Rank fusion and recency scoring. Pure functions over ids and numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Fused:
    """One id after fusion: its score and the retrievers that found it (best first)."""

    id: str
    score: float
    retrievers: tuple[str, ...]


def rrf(
    rankings: Mapping[str, Sequence[str]],
    *,
    k: float = 60.0,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Weighted reciprocal rank fusion: score(d) = Σ_r w_r / (k + rank_r(d)), ranks from 1."""
    scores: dict[str, float] = {}
    found: dict[str, list[tuple[int, str]]] = {}
    for name, ids in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        seen: set[str] = set()
        for rank, doc in enumerate(ids, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
            found.setdefault(doc, []).append((rank, name))
    ordered = sorted(scores, key=lambda d: (-scores[d], min(found[d])[0], d))
    return [Fused(d, scores[d], tuple(n for _, n in sorted(found[d]))) for d in ordered]


NORMS = ("max", "minmax", "zscore", "none")


def score_fusion(
    runs: Mapping[str, Sequence[tuple[str, float]]],
    *,
    weights: Mapping[str, float] | None = None,
    norm: str | Mapping[str, str] = "max",
    floor: bool | Mapping[str, bool] = False,
) -> list[Fused]:
    """Weighted sum of each retriever's normalised scores.

    `norm` is one method for all retrievers or one per retriever name (default
    "max"). `"max"` divides by the retriever's best score (negative scores count
    as 0), so two near-equal keyword hits stay near-equal even when only two
    match; `"minmax"` stretches each list to [0, 1]; `"zscore"` scales by the
    list's standard deviation above its minimum; `"none"` keeps scores that
    already have a fixed scale (cosine similarity) as they are, so a query
    whose best vector hit is poor does not get it inflated to 1.

    A document missing from a retriever's list scores 0 there, or with
    `floor=True` (for all lists, or per retriever name) that list's lowest scaled
    score: it ranked below every listed document, so that is its best possible
    score, and a strong hit in one retriever is not sunk by a cut-off in the other.
    Floor only lists that were cut off: a list that holds every match (fewer hits
    than were asked for) says a missing document did not match at all, and
    flooring it would give every document full marks when there is one match.

    Measured on SciFact train
    (benchmarks/retrieval_eval.py) score fusion beats RRF: it keeps how far
    apart the scores are, which ranks alone lose.
    """
    scaled_runs: dict[str, dict[str, float]] = {}
    found: dict[str, list[tuple[int, str]]] = {}
    for name, ranked in runs.items():
        if not ranked:
            continue
        how = norm if isinstance(norm, str) else norm.get(name, "max")
        if how not in NORMS:
            raise ValueError(f"unknown score normalisation {how!r}")
        values = [s for _, s in ranked]
        hi = max(values)
        lo = min(values) if how == "minmax" else 0.0
        if how == "zscore":  # standardise, then shift so the list's minimum maps to 0
            mean = sum(values) / len(values)
            std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
            lo, hi = min(values), min(values) + std
        scaled: dict[str, float] = {}
        for rank, (doc, score) in enumerate(ranked, start=1):
            if doc in scaled:
                continue
            if how == "none":
                scaled[doc] = score
            else:
                scaled[doc] = max(score - lo, 0.0) / (hi - lo) if hi > lo else 1.0
            found.setdefault(doc, []).append((rank, name))
        scaled_runs[name] = scaled
    scores: dict[str, float] = {}
    for name, scaled in scaled_runs.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        floored = floor if isinstance(floor, bool) else floor.get(name, False)
        missing = min(scaled.values()) if floored else 0.0
        for doc in found:
            scores[doc] = scores.get(doc, 0.0) + weight * scaled.get(doc, missing)
    ordered = sorted(scores, key=lambda d: (-scores[d], min(found[d])[0], d))
    return [Fused(d, scores[d], tuple(n for _, n in sorted(found[d]))) for d in ordered]


def recency_factor(day: str, today: date, half_life_days: float | None) -> float:
    """Multiplier in (0.5, 1]: halves the distance to 0.5 every `half_life_days` of age.

    Old lessons stay findable (never below half their score); recent notes win ties.
    """
    if not half_life_days:
        return 1.0
    try:
        age = (today - date.fromisoformat(day[:10])).days
    except ValueError:
        return 1.0
    decay = math.pow(0.5, max(age, 0) / half_life_days)
    return 0.5 + 0.5 * decay


def rerank_by_recency(
    scored: Sequence[tuple[str, float]],
    dates: Mapping[str, str],
    today: date,
    half_life: float | None,
) -> list[tuple[str, float]]:
    """Apply similarity × recency to (id, score) pairs and re-sort, stable on ties."""
    if not half_life:
        return list(scored)
    out = [(i, s * recency_factor(dates.get(i, ""), today, half_life)) for i, s in scored]
    return sorted(out, key=lambda p: -p[1])
