"""The request's title as the judge of the first place: how much of it each leading file holds.

The two best files are often a near thing (the module whose API a report uses and the module
the fix goes in: fmt's `core.h` and `chrono.h`, tracing's `lib.rs` and `expand.rs`), and the
whole request's words cannot tell them apart: both match them. The title says in a line what the
report is about. Each of the two gets its share of the title's weight, every title term
counted by its BM25 saturation in the file (a word a long file holds once counts little), and
that share, times `Weights.title_order` of the first file's score, is added to both. Only the
order of the two can change: the third file and below keep their places and scores.
On the four localization sets at 0.3 and 0.35: 10 first places up and 1 down (at 0.2: 6 up,
none down; benchmarks/README.md, twenty-ninth session).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nexusd.code.corpus import Corpus
from nexusd.code.lexical import Bm25, Floats
from nexusd.protocol.inline import inline_code

# How many leading files the title orders. Ordering the first three too cost a first place
# and moved places two and three 4 up, 4 down (benchmarks/README.md, 29th session).
LEADING = 2


def title_share(
    bm25: Bm25, doc: int, terms: Sequence[tuple[str, float]]
) -> tuple[float, dict[str, float]]:
    """The share of the title's weight (term weight × idf) document `doc` holds, each term
    counted by its BM25 saturation there, and what each term it holds gave.

    Only the terms some document of the index holds weigh: the vocabulary outlives the files
    (a word only a deleted file or a README held), and the order of two files must not
    depend on what the index once saw."""
    total = 0.0
    held: dict[str, float] = {}
    for term, weight in terms:
        posting = bm25.posting(term)
        if posting is None or len(posting.docs) == 0 or weight <= 0:
            continue
        value = weight * bm25.idf(term)
        total += value
        pos = int(np.searchsorted(posting.docs, doc))
        if pos < len(posting.docs) and posting.docs[pos] == doc:
            tf = float(posting.freqs[pos])
            held[term] = value * tf / (tf + float(bm25.norm[doc]))
    if total <= 0:
        return 0.0, {}
    return sum(held.values()) / total, {term: value / total for term, value in held.items()}


def order_by_title(
    corpus: Corpus,
    terms: Sequence[tuple[str, float]],
    total: Floats,
    share: float,
    order: npt.NDArray[np.intp],
) -> tuple[int, str] | None:
    """Add to the two best files' `total` (in place) their title share × `share` of the best
    score; the file this puts first where it was second, and the reason to give it, or None.
    `order`: the files by `total`, best first, ties by index (a stable sort), as `rank` has
    them: only its first two can change places, so the caller swaps them, not sorts again."""
    order = order[:LEADING]
    if not terms or share <= 0 or len(order) < LEADING:
        return None
    best = float(total[order[0]])
    if best <= 0 or total[order[-1]] <= 0:
        return None
    parts: dict[int, dict[str, float]] = {}
    for f in order:
        bm25 = corpus.prose_bm25 if corpus.prose[f] else corpus.file_bm25
        value, parts[int(f)] = title_share(bm25, int(f), terms)
        total[f] += share * best * value
    first, second = int(order[0]), int(order[-1])
    # Where a stable sort of the new scores would put them: a tie goes to the lower index.
    if total[second] < total[first] or (total[second] == total[first] and second > first):
        return None
    # The words that tell the two apart: those the promoted file holds more of (a word both
    # hold counts less in the longer file), most telling first.
    ahead = {t: v - parts[first].get(t, 0.0) for t, v in parts[second].items()}
    words = sorted((t for t, gap in ahead.items() if gap > 0), key=lambda t: -ahead[t])[:4]
    said = f" ({', '.join(inline_code(w) for w in words)})" if words else ""
    return second, f"holds more of the title than {inline_code(corpus.paths[first])}{said}"
