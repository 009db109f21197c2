"""BM25 over documents given as token counts, with per-term postings in numpy arrays.

Built once from the index (files and units are documents), queried many times: a query of
a few hundred weighted terms over tens of thousands of units costs a few milliseconds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

K1 = 1.2
B = 0.75

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Posting:
    """The documents a term occurs in (ascending) and how often."""

    docs: npt.NDArray[np.int32]
    freqs: Floats


class Bm25:
    """Okapi BM25 with weighted query terms; postings kept as one CSR matrix."""

    def __init__(self, docs: Sequence[Mapping[str, int]], k1: float = K1, b: float = B) -> None:
        self.n = len(docs)
        self.k1 = k1
        self.vocab: dict[str, int] = {}
        ids: list[int] = []
        tfs: list[int] = []
        sizes = np.zeros(self.n, dtype=np.int64)
        lengths = np.zeros(self.n, dtype=np.float64)
        setdefault = self.vocab.setdefault
        for index, doc in enumerate(docs):
            ids.extend([setdefault(term, len(self.vocab)) for term in doc])
            counts = list(doc.values())
            tfs.extend(counts)
            sizes[index] = len(counts)
            lengths[index] = sum(counts)
        avg = float(lengths.mean()) if self.n else 1.0
        self.norm: Floats = k1 * (1.0 - b + b * lengths / max(avg, 1e-9))
        term_ids = np.asarray(ids, dtype=np.int64)
        doc_ids = np.repeat(np.arange(self.n, dtype=np.int32), sizes)
        order = np.argsort(term_ids, kind="stable")  # stable: docs stay ascending per term
        self.docs = doc_ids[order]
        self.freqs = np.asarray(tfs, dtype=np.float64)[order]
        self.indptr = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_ids, minlength=len(self.vocab)), out=self.indptr[1:])

    def posting(self, term: str) -> Posting | None:
        """Where `term` occurs, or None."""
        tid = self.vocab.get(term)
        if tid is None:
            return None
        lo, hi = self.indptr[tid], self.indptr[tid + 1]
        return Posting(self.docs[lo:hi], self.freqs[lo:hi])

    def df(self, term: str) -> int:
        """How many documents contain `term`."""
        tid = self.vocab.get(term)
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

    def matched(self, doc: int, terms: Mapping[str, float], limit: int = 6) -> list[str]:
        """The query terms document `doc` contains, rarest first (a hit's reason)."""
        found = []
        for term, weight in terms.items():
            posting = self.posting(term)
            if posting is not None:
                pos = int(np.searchsorted(posting.docs, doc))
                if pos < len(posting.docs) and posting.docs[pos] == doc:
                    found.append((self.idf(term) * weight, term))
        found.sort(reverse=True)
        return [term for _, term in found[:limit]]


def merge_counts(counts: Sequence[Counter[str]]) -> Counter[str]:
    """The sum of several token counts."""
    total: Counter[str] = Counter()
    for count in counts:
        total.update(count)
    return total
