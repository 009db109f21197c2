"""Unit embeddings for `localization_offline.py --unit-embeddings`: the packaged MiniLM on
every class, function and method of a checkout.

Each unit is embedded as its qualified name in words, its signature and the start of its
docstring, cached by that text (in memory and, between runs, in a pickle beside the parse
cache), so a unit is embedded again only when that text changes. A file scores by its best
unit's cosine to the report, counted above the 90th percentile of the files' scores and
divided by the best: the `semantic` signal of `nexusd.code.rank.rank(extra=...)`. Not
shipped: benchmarks/README.md (sixteenth session) has what it adds and what it costs; this is
the harness for measuring a code embedder the same way once one can be installed.
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
from _semantic import CachedEncoder

from nexusd.code.corpus import Corpus
from nexusd.code.units import CodeUnit

REPORT_CHARS = 1500
SIGNATURE_CHARS = 150
DOC_CHARS = 250
# Only files closer to the report than this share of all files say anything.
PERCENTILE = 90
BATCH = 512


def unit_text(unit: CodeUnit) -> str:
    """What is embedded for a unit: `Parser parse expr. def parse_expr(self, s) Parse …`."""
    words = re.sub(r"[_.]", " ", unit.qualname)
    return f"{words}. {unit.signature[:SIGNATURE_CHARS]} {unit.doc[:DOC_CHARS]}".strip()


class UnitVectors(CachedEncoder):
    """Unit vectors of the corpora ranked in one run, cached by unit text."""

    def __init__(self, store: Path) -> None:
        super().__init__("--unit-embeddings")
        self.store = store
        if store.exists():
            self.cache = pickle.loads(store.read_bytes())

    def scores(self, corpus: Corpus, report: str) -> np.ndarray:
        """One score in [0, 1] per file of `corpus`: its best unit against `report`."""
        pairs = [
            (entry.file, unit_text(entry.unit))
            for entry in corpus.entries
            if entry.unit.kind != "window" and not corpus.prose[entry.file]
        ]
        best = np.full(len(corpus.paths), -1.0)
        if not pairs:
            return np.zeros(len(corpus.paths))
        # float16: half the bytes of the cache kept between runs.
        self.encode_missing({text: text for _, text in pairs}, chunk=BATCH, dtype=np.float16)
        vectors = np.stack([self.cache[text] for _, text in pairs]).astype(np.float32)
        query = self.model.encode([report[:REPORT_CHARS]])[0]
        np.maximum.at(best, np.array([f for f, _ in pairs]), vectors @ query)
        held = best > -1.0
        low, high = float(np.percentile(best[held], PERCENTILE)), float(best.max())
        scores: np.ndarray = np.clip((best - low) / max(high - low, 1e-9), 0.0, 1.0) * held
        return scores

    def save(self) -> None:
        """Keep the vectors for the next run (written whole, then renamed)."""
        part = self.store.with_suffix(".part")
        part.write_bytes(pickle.dumps(self.cache, protocol=pickle.HIGHEST_PROTOCOL))
        part.replace(self.store)
