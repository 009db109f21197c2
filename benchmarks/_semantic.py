"""The embedding signal measured by `localization.py --embeddings`: MiniLM on file summaries.

Each file is summarised as its path words, its module docstring and the names of its
classes and functions; the packaged MiniLM embeds the summary (cached by its text, so a
file is embedded again only when its summary changes) and the report. The cosine of each
file to the report becomes the `semantic` signal of `nexusd.code.rank.rank(extra=...)`.
Not shipped: see benchmarks/README.md for what it adds and what it costs.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from nexusd.code.corpus import Corpus
from nexusd.code.units import ParsedFile

SUMMARY_CHARS = 2000
REPORT_CHARS = 2000
MAX_NAMES = 80


def summary(parsed: ParsedFile) -> str:
    """Path words, module docstring, and the qualified names of the file's definitions."""
    words = parsed.path.rsplit(".", 1)[0].replace("/", " ").replace("_", " ")
    names = [u.qualname for u in parsed.units[1:MAX_NAMES] if u.kind != "window"]
    return "\n".join(p for p in (words, parsed.file_unit.doc, *names) if p)[:SUMMARY_CHARS]


class CachedEncoder:
    """The packaged MiniLM, its vectors cached by key, and what encoding them cost."""

    def __init__(self, option: str) -> None:
        from nexusd.memory.embedder import Embedder

        self.model = Embedder("all-MiniLM-L6-v2")
        if not self.model.load():
            raise SystemExit(f"{option} needs the packaged model: {self.model.error}")
        self.cache: dict[str, np.ndarray] = {}
        self.encoded = 0
        self.encode_s = 0.0

    def encode_missing(
        self, texts: Mapping[str, str], *, chunk: int | None = None, dtype: Any = np.float32
    ) -> None:
        """Encode the texts (key → text) whose key is not cached yet, `chunk` at a time
        (None: in one call), kept as `dtype`."""
        todo = [key for key in texts if key not in self.cache]
        if not todo:
            return
        started = time.perf_counter()
        step = chunk or len(todo)
        for i in range(0, len(todo), step):
            keys = todo[i : i + step]
            vectors = self.model.encode([texts[key] for key in keys])
            for key, vector in zip(keys, vectors, strict=True):
                self.cache[key] = vector.astype(dtype, copy=False)
        self.encoded += len(todo)
        self.encode_s += time.perf_counter() - started


class FileVectors(CachedEncoder):
    """File-summary vectors of a corpus, cached across checkouts by summary text."""

    def __init__(self) -> None:
        super().__init__("--embeddings")

    def scores(self, corpus: Corpus, report: str) -> np.ndarray:
        """Per file of `corpus.paths`: cosine to the report, above the median, best = 1."""
        keys = []
        todo: dict[str, str] = {}
        for parsed in corpus.files:
            text = summary(parsed)
            key = hashlib.sha1(text.encode()).hexdigest()
            keys.append(key)
            todo[key] = text
        self.encode_missing(todo)
        query = self.model.encode([report[:REPORT_CHARS]])[0]
        cos = np.stack([self.cache[k] for k in keys]) @ query
        # Relative evidence: only files closer than the median file say anything.
        low, high = float(np.median(cos)), float(cos.max())
        scores: np.ndarray = np.clip((cos - low) / max(high - low, 1e-9), 0.0, 1.0)
        return scores
