"""The request's title as the judge of the first place: how much of it each leading file holds.

The two best files are often a near thing (the module whose API a report uses and the module
the fix goes in: fmt's `core.h` and `chrono.h`, tracing's `lib.rs` and `expand.rs`), and the
whole request's words cannot tell them apart: both match them. The title says in a line what the
report is about. Each of the two gets its share of the title's weight, every title term
counted by its BM25 saturation in the file (a word a long file holds once counts little), and
that share, times `Weights.title_order` of the first file's score, is added to both. Only the
order of the two can change: the third file and below keep their places and scores.
On all four localization sets, at 0.25 and 0.3: 8 first places up and none down (6 up at 0.2;
benchmarks/README.md, twenty-ninth session).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nexusd.code.corpus import Corpus
from nexusd.code.lexical import Bm25, Floats
from nexusd.protocol.inline import inline_code

# How many leading files the title orders. Ordering the first three gave the same first places
# and moved places two and three only, 4 up and 3 down (benchmarks/README.md, 29th session).
LEADING = 2


def title_share(
    bm25: Bm25, doc: int, terms: Sequence[tuple[str, float]]
) -> tuple[float, list[str]]:
    """The share of the title's weight (term weight × idf) document `doc` holds, each term
    counted by its BM25 saturation there, and the title's terms it holds, heaviest first."""
    total = 0.0
    held = 0.0
    found: list[tuple[float, str]] = []
    for term, weight in terms:
        posting = bm25.posting(term)
        if posting is None or weight <= 0:
            continue
        value = weight * bm25.idf(term)
        total += value
        pos = int(np.searchsorted(posting.docs, doc))
        if pos < len(posting.docs) and posting.docs[pos] == doc:
            tf = float(posting.freqs[pos])
            held += value * tf / (tf + float(bm25.norm[doc]))
            found.append((value, term))
    found.sort(reverse=True)
    return (held / total if total > 0 else 0.0), [term for _, term in found]


def order_by_title(
    corpus: Corpus, terms: Sequence[tuple[str, float]], total: Floats, share: float
) -> tuple[int, str] | None:
    """Add to the two best files' `total` (in place) their title share × `share` of the best
    score; the file this puts first where it was second, and the reason to give it, or None."""
    if not terms or share <= 0 or len(total) < LEADING:
        return None
    order = np.argsort(-total, kind="stable")[:LEADING]
    best = float(total[order[0]])
    if best <= 0 or total[order[-1]] <= 0:
        return None
    words: dict[int, list[str]] = {}
    for f in order:
        bm25 = corpus.prose_bm25 if corpus.prose[f] else corpus.file_bm25
        value, words[int(f)] = title_share(bm25, int(f), terms)
        total[f] += share * best * value
    first, second = int(order[0]), int(order[-1])
    if total[second] <= total[first]:
        return None
    held = ", ".join(inline_code(w) for w in words[second][:4])
    return second, f"holds more of the title than {inline_code(corpus.paths[first])} ({held})"
