"""Rank fusion and recency are pure arithmetic."""

from __future__ import annotations

from datetime import date

import pytest

from nexusd.memory.fusion import recency_factor, rerank_by_recency, rrf, score_fusion


def test_rrf_sums_weighted_reciprocal_ranks_and_names_retrievers() -> None:
    fused = rrf({"vector": ["a", "b", "c"], "keyword": ["b", "d"]}, k=60)
    assert fused[0].id == "b"
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].retrievers == ("keyword", "vector")
    assert {f.id: f.retrievers for f in fused}["d"] == ("keyword",)
    assert [f.id for f in fused] == ["b", "a", "d", "c"]


def test_weights_change_the_order() -> None:
    rankings = {"vector": ["a", "b"], "keyword": ["b", "a"]}
    assert rrf(rankings, k=1, weights={"vector": 3.0, "keyword": 1.0})[0].id == "a"
    assert rrf(rankings, k=1, weights={"vector": 1.0, "keyword": 3.0})[0].id == "b"


def test_duplicates_within_one_ranking_count_once() -> None:
    fused = rrf({"vector": ["a", "a", "b"]}, k=0)
    assert [(f.id, f.score) for f in fused] == [("a", 1.0), ("b", 1 / 3)]


@pytest.mark.parametrize(
    ("day", "half_life", "expected"),
    [
        ("2026-01-10", None, 1.0),
        ("2026-01-10", 10.0, 1.0),
        ("2025-12-31", 10.0, 0.75),
        ("2025-12-21", 10.0, 0.625),
        ("not a date", 10.0, 1.0),
        ("2026-02-01", 10.0, 1.0),
    ],
)
def test_recency_factor(day: str, half_life: float | None, expected: float) -> None:
    assert recency_factor(day, date(2026, 1, 10), half_life) == pytest.approx(expected)


def test_recency_rerank_lets_a_recent_note_overtake_an_old_one() -> None:
    scored = [("old", 1.0), ("new", 0.9)]
    dates = {"old": "2020-01-01", "new": "2026-01-10"}
    assert rerank_by_recency(scored, dates, date(2026, 1, 10), None)[0][0] == "old"
    assert rerank_by_recency(scored, dates, date(2026, 1, 10), 30.0)[0][0] == "new"


def test_score_fusion_max_norm_keeps_near_ties_near() -> None:
    runs = {"keyword": [("a", 1.10), ("b", 1.07)], "vector": [("b", 0.32), ("a", 0.15)]}
    fused = score_fusion(runs, weights={"keyword": 1.0, "vector": 1.0})
    assert fused[0].id == "b" and fused[0].retrievers == ("vector", "keyword")
    assert fused[0].score == pytest.approx(1.07 / 1.10 + 1.0)
    stretched = score_fusion(runs, norm="minmax")
    assert [(f.id, f.score) for f in stretched] == [("a", 1.0), ("b", 1.0)]


def test_score_fusion_missing_docs_and_negative_scores_count_zero() -> None:
    fused = score_fusion(
        {"vector": [("a", 0.5), ("b", -0.2)], "keyword": [("c", 3.0)]},
        weights={"vector": 2.0, "keyword": 1.0},
    )
    assert [(f.id, round(f.score, 6)) for f in fused] == [("a", 2.0), ("c", 1.0), ("b", 0.0)]


def test_score_fusion_none_norm_keeps_cosine_scale() -> None:
    # A weak best vector hit stays weak instead of being scaled up to 1.
    runs = {"vector": [("a", 0.3), ("b", 0.2)], "keyword": [("b", 4.0), ("a", 2.0)]}
    fused = score_fusion(runs, norm={"vector": "none", "keyword": "max"})
    assert [(f.id, round(f.score, 6)) for f in fused] == [("b", 1.2), ("a", 0.8)]


def test_score_fusion_floor_scores_missing_docs_at_the_lists_lowest() -> None:
    runs = {"vector": [("a", 0.6), ("b", 0.4)], "keyword": [("c", 2.0), ("a", 1.0)]}
    fused = score_fusion(runs, norm={"vector": "none", "keyword": "max"}, floor=True)
    scores = {f.id: round(f.score, 6) for f in fused}
    assert scores == {"a": 1.1, "b": 0.9, "c": 1.4}
    assert {f.id: f.retrievers for f in fused}["c"] == ("keyword",)
    assert score_fusion(runs, norm={"vector": "none", "keyword": "max"})[-1].id == "b"


def test_score_fusion_rejects_unknown_norm() -> None:
    with pytest.raises(ValueError, match="normalisation"):
        score_fusion({"vector": [("a", 1.0)]}, norm="sqrt")


def test_a_complete_list_does_not_floor_the_documents_it_lacks() -> None:
    runs = {
        "vector": [("near-miss", 0.71), ("exact", 0.55), ("other", 0.40)],
        "keyword": [("exact", 7.5)],  # the only match there is
    }
    weights = {"vector": 0.75, "keyword": 0.25}
    norm = {"vector": "none", "keyword": "max"}
    # Floored, the one keyword hit is also the list's lowest score: everyone gets it.
    floored = score_fusion(runs, weights=weights, norm=norm, floor=True)
    assert floored[0].id == "near-miss"
    # The keyword list was not cut off, so a document missing from it did not match.
    fused = score_fusion(runs, weights=weights, norm=norm, floor={"vector": True})
    assert [f.id for f in fused] == ["exact", "near-miss", "other"]
    assert fused[0].retrievers == ("keyword", "vector")
