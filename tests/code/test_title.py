"""The title orders the first two files: by how much of it each holds, and nothing else moves."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nexusd.code.corpus import Corpus, TokenCache
from nexusd.code.evidence import signals
from nexusd.code.lang_python import parse_python
from nexusd.code.lexical import Bm25
from nexusd.code.query import mine
from nexusd.code.rank import combine, rank
from nexusd.code.title import order_by_title, title_share
from nexusd.code.weights import Weights
from tests.code.conftest import NET

# The body names the API (`fetch`, defined in client.py); the title says what is wrong, in
# the words of the module below it.
TEXT = "Calling fetch(url) on a dead host hangs: fetch never returns and the retry never stops."
TITLE = "Retry backoff ignores the timeout"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus(parse_python(path, text) for path, text in NET.items())


def by_score(total: np.ndarray) -> np.ndarray:
    return np.argsort(-total, kind="stable")


def paths(corpus: Corpus, title: str, share: float) -> list[str]:
    weights = replace(Weights(), title_order=share)
    return [hit.path for hit in rank(corpus, mine(TEXT, title=title), k=3, weights=weights)]


def test_the_file_holding_more_of_the_title_goes_first(corpus: Corpus) -> None:
    assert paths(corpus, TITLE, 0.0)[:2] == ["net/client.py", "net/transport.py"]
    hits = rank(corpus, mine(TEXT, title=TITLE), k=3)
    assert [hit.path for hit in hits[:2]] == ["net/transport.py", "net/client.py"]
    assert hits[0].score > hits[1].score  # the scores say the order the list shows
    assert hits[0].reasons[0] == (
        "holds more of the title than `net/client.py` (`backoff`, `retry`, `timeout`)"
    )
    assert not any("title" in reason for reason in hits[1].reasons)


@pytest.mark.parametrize("title", ["", "   ", "Client hangs"])
def test_a_title_that_does_not_favour_the_second_changes_nothing(
    corpus: Corpus, title: str
) -> None:
    assert paths(corpus, title, 0.25) == paths(corpus, title, 0.0)


def test_only_the_first_two_scores_change(corpus: Corpus) -> None:
    query = mine(TEXT, title=TITLE)
    sig, _units = signals(corpus, query)
    before = combine(corpus, sig, Weights())
    after = before.copy()
    moved = order_by_title(corpus, query.title_terms, after, 0.25, by_score(before))
    assert moved is not None and corpus.paths[moved[0]] == "net/transport.py"
    first_two = np.argsort(-before, kind="stable")[:2]
    rest = np.setdiff1d(np.arange(len(before)), first_two)
    assert np.array_equal(after[rest], before[rest])
    assert (after[first_two] > before[first_two]).all()
    assert set(np.argsort(-after, kind="stable")[:2]) == set(first_two)


def test_nothing_to_order(corpus: Corpus) -> None:
    terms = mine(TITLE).terms
    for total, share in [([2.0, 1.0, 0.5], 0.0), ([2.0, 0.0, 0.0], 0.25), ([0.0] * 3, 0.25)]:
        scores = np.array(total)
        assert order_by_title(corpus, terms, scores, share, by_score(scores)) is None
    scores = np.array([2.0, 1.0, 0.5])
    assert order_by_title(corpus, (), scores, 0.25, by_score(scores)) is None


def test_a_word_a_long_file_holds_once_counts_less() -> None:
    bm25 = Bm25([{"retry": 3, "send": 2}, {"retry": 1, **{f"w{i}": 1 for i in range(60)}}])
    short, held = title_share(bm25, 0, [("retry", 1.0), ("backoff", 1.0)])
    long, _ = title_share(bm25, 1, [("retry", 1.0), ("backoff", 1.0)])
    assert 0 < long < short < 1
    assert list(held) == ["retry"] and held["retry"] == pytest.approx(short)
    assert title_share(bm25, 0, [("backoff", 1.0)]) == (0.0, {})
    assert title_share(bm25, 0, [("retry", 0.0)]) == (0.0, {})


def test_a_word_no_file_holds_weighs_nothing() -> None:
    """The vocabulary outlives deleted files: what the index once saw must not order files."""
    files = {**NET, "net/old.py": "def old():\n    return 'ignores every reconnect'\n"}
    cache = TokenCache()
    Corpus((parse_python(path, text) for path, text in files.items()), cache)
    seen = Corpus((parse_python(path, text) for path, text in NET.items()), cache)
    fresh = Corpus(parse_python(path, text) for path, text in NET.items())
    title = TITLE + " after a reconnect"
    assert "reconnect" in cache.vocab
    for f in (0, 1):
        held = [title_share(c.file_bm25, f, mine(title).terms) for c in (seen, fresh)]
        assert held[0][0] == pytest.approx(held[1][0]) and held[0][1] == pytest.approx(held[1][1])
    ranked = [rank(c, mine(TEXT, title=title), k=3) for c in (seen, fresh)]
    assert [(h.path, h.score) for h in ranked[0]] == [(h.path, h.score) for h in ranked[1]]


def test_the_title_is_mined_on_its_own() -> None:
    query = mine("The parser drops `x` on the floor.", title="Parser.feed loses tokens")
    assert query.title_terms == mine("Parser.feed loses tokens").terms
    assert ("feed", 1.0) in query.title_terms
    assert mine("no title here").title_terms == ()
    # The operations a title writes are its words, as in the request's query.
    assert {"mul", "pow"} <= dict(mine("", title="x**2 * y is wrong").title_terms).keys()
