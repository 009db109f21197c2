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


def test_units_are_normalised_for_length_less_than_files() -> None:
    """A long function that works with a word is not outweighed by a one-liner that says it
    once as much as plain BM25 would have it."""
    from nexusd.code.corpus import Corpus, unit_counts
    from nexusd.code.lang_python import parse_python
    from nexusd.code.lexical import B

    body = "".join(f"    value_{i} = store.read_{i}(key_{i})\n" for i in range(20))
    files = {
        "a/long.py": f"def flush_cache(store):\n{body}    store.cache.clear()\n",
        "a/short.py": "def peek(cache):\n    return cache\n",
        "a/other.py": "def unrelated(x):\n    return x + 1\n",
    }
    parsed = sorted(
        (parse_python(path, text) for path, text in files.items()), key=lambda p: p.path
    )
    units = [unit for p in parsed for unit in p.units[1:]]  # the corpus's entries, in order
    corpus = Corpus(parsed)
    names = [entry.unit.name for entry in corpus.entries]
    assert names == [unit.name for unit in units]
    long, short = names.index("flush_cache"), names.index("peek")
    ours = corpus.unit_bm25.scores({"cache": 1.0})
    plain = Bm25([unit_counts(unit) for unit in units], b=B).scores({"cache": 1.0})
    assert ours[long] / ours[short] > plain[long] / plain[short]
