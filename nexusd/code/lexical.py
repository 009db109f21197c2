"""BM25 over documents given as token counts, with per-term postings in numpy arrays.

Built once from the index (files and units are documents), queried many times: a query of
a few hundred weighted terms over tens of thousands of units costs a few milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

K1 = 1.2
B = 0.75

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
TermArray = tuple[Ints, Ints]  # (term ids, counts) of one document


@dataclass(frozen=True)
class Posting:
    """The documents a term occurs in (ascending) and how often."""

    docs: npt.NDArray[np.int32]
    freqs: Floats


class Bm25:
    """Okapi BM25 with weighted query terms; postings kept as one CSR matrix."""

    def __init__(
        self,
        docs: Sequence[Mapping[str, int] | TermArray],
        vocab: dict[str, int] | None = None,
        k1: float = K1,
        b: float = B,
    ) -> None:
        """Index `docs`: token counts, or (term ids, counts) arrays encoded with `vocab`."""
        self.n = len(docs)
        self.k1 = k1
        if vocab is None and any(isinstance(d, tuple) for d in docs):
            raise ValueError("documents given as term arrays need the vocabulary that made them")
        self.vocab = {} if vocab is None else vocab
        arrays = [d if isinstance(d, tuple) else encode(d, self.vocab) for d in docs]
        sizes = np.fromiter((len(a[0]) for a in arrays), dtype=np.int64, count=self.n)
        empty = np.zeros(0, dtype=np.int64)
        term_ids = np.concatenate([a[0] for a in arrays]) if arrays else empty
        tfs = np.concatenate([a[1] for a in arrays]).astype(np.float64) if arrays else empty
        lengths = np.zeros(self.n, dtype=np.float64)
        doc_ids = np.repeat(np.arange(self.n, dtype=np.int32), sizes)
        np.add.at(lengths, doc_ids, tfs)
        # Empty documents (files scored by another index) do not lower the average length.
        filled = lengths[lengths > 0]
        avg = float(filled.mean()) if len(filled) else 1.0
        self.norm: Floats = k1 * (1.0 - b + b * lengths / max(avg, 1e-9))
        order = np.argsort(term_ids, kind="stable")  # stable: docs stay ascending per term
        self.docs = doc_ids[order]
        self.freqs = np.asarray(tfs, dtype=np.float64)[order]
        self.indptr = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_ids, minlength=len(self.vocab)), out=self.indptr[1:])

    def _tid(self, term: str) -> int | None:
        """`term`'s id in this index; None for terms it has never seen. The vocabulary is
        shared with later builds and grows under a search: ids beyond this index's own
        were added after it was built (the daemon searched while it re-indexed)."""
        tid = self.vocab.get(term)
        return tid if tid is not None and tid < len(self.indptr) - 1 else None

    def posting(self, term: str) -> Posting | None:
        """Where `term` occurs, or None."""
        tid = self._tid(term)
        if tid is None:
            return None
        lo, hi = self.indptr[tid], self.indptr[tid + 1]
        return Posting(self.docs[lo:hi], self.freqs[lo:hi])

    def df(self, term: str) -> int:
        """How many documents contain `term`."""
        tid = self._tid(term)
        return 0 if tid is None else int(self.indptr[tid + 1] - self.indptr[tid])

    def idf(self, term: str) -> float:
        """ln(1 + (N - df + 0.5) / (df + 0.5)): rare terms weigh more."""
        df = self.df(term)
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, terms: Mapping[str, float]) -> Floats:
        """The score of every document for `terms` (term → query weight)."""
        out = np.zeros(self.n, dtype=np.float64)
        for term, weight in terms.items():
            posting = self.posting(term)
            if posting is None or weight <= 0:
                continue
            tf = posting.freqs
            part = tf * (self.k1 + 1.0) / (tf + self.norm[posting.docs])
            out[posting.docs] += weight * self.idf(term) * part
        return out

    def telling(self, terms: Mapping[str, float], limit: int = 48) -> list[str]:
        """The query's terms that say most (rarest, weighted), best first: what reasons name."""
        ranked = sorted(
            ((self.idf(t) * w, t) for t, w in terms.items() if self._tid(t) is not None),
            reverse=True,
        )
        return [t for _, t in ranked[:limit]]

    def matched(self, doc: int, telling: Sequence[str], limit: int = 6) -> list[str]:
        """Which of the `telling` terms (best first) document `doc` contains."""
        found = []
        for term in telling:
            posting = self.posting(term)
            if posting is not None:
                pos = int(np.searchsorted(posting.docs, doc))
                if pos < len(posting.docs) and posting.docs[pos] == doc:
                    found.append(term)
                    if len(found) == limit:
                        break
        return found


def encode(counts: Mapping[str, int], vocab: dict[str, int]) -> TermArray:
    """Token counts as (term ids, counts) arrays; new terms join `vocab`."""
    setdefault = vocab.setdefault
    ids = [setdefault(term, len(vocab)) for term in counts]
    return np.array(ids, dtype=np.int64), np.array(list(counts.values()), dtype=np.int64)


def decode(packed: str, vocab: dict[str, int]) -> TermArray:
    """Packed token counts (`tokens.pack_counts`) as (term ids, counts) arrays; new terms
    join `vocab`. One pass, no Counter: opening a stored index decodes every unit."""
    setdefault = vocab.setdefault
    ids: list[int] = []
    tfs: list[int] = []
    for item in packed.split():
        word, _, n = item.partition(":")
        ids.append(setdefault(word, len(vocab)))
        tfs.append(int(n) if n else 1)
    return np.array(ids, dtype=np.int64), np.array(tfs, dtype=np.int64)


def add_arrays(parts: Sequence[TermArray]) -> TermArray:
    """The sum of several (term ids, counts) arrays, as one."""
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ids = np.concatenate([p[0] for p in parts])
    tfs = np.concatenate([p[1] for p in parts])
    unique, inverse = np.unique(ids, return_inverse=True)
    return unique, np.bincount(inverse, weights=tfs).astype(np.int64)
