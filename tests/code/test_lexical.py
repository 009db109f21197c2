"""BM25 over term arrays sharing one vocabulary with later builds."""

from __future__ import annotations

from collections import Counter

from nexusd.code.lexical import Bm25, encode


def test_terms_added_to_the_shared_vocabulary_after_a_build_are_unknown_to_it() -> None:
    vocab: dict[str, int] = {}
    old = Bm25([encode(Counter({"parse": 2, "expr": 1}), vocab)], vocab)
    # A later build (the daemon re-indexing) adds a term while a search reads `old`.
    encode(Counter({"latex": 1}), vocab)
    assert old.posting("latex") is None and old.df("latex") == 0
    assert old.scores({"latex": 1.0, "parse": 1.0})[0] > 0
    assert old.telling({"latex": 1.0, "parse": 1.0}) == ["parse"]
