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


class FileVectors:
    """File-summary vectors of a corpus, cached across checkouts by summary text."""

    def __init__(self) -> None:
        from nexusd.memory.embedder import Embedder

        self.model = Embedder("all-MiniLM-L6-v2")
        if not self.model.load():
            raise SystemExit(f"--embeddings needs the packaged model: {self.model.error}")
        self.cache: dict[str, np.ndarray] = {}
        self.encoded = 0
        self.encode_s = 0.0

    def scores(self, corpus: Corpus, report: str) -> np.ndarray:
        """Per file of `corpus.paths`: cosine to the report, above the median, best = 1."""
        keys = []
        todo: dict[str, str] = {}
        for parsed in corpus.files:
            text = summary(parsed)
            key = hashlib.sha1(text.encode()).hexdigest()
            keys.append(key)
            if key not in self.cache:
                todo[key] = text
        if todo:
            started = time.perf_counter()
            vectors = self.model.encode(list(todo.values()))
            self.encode_s += time.perf_counter() - started
            self.encoded += len(todo)
            self.cache.update(zip(todo, vectors, strict=True))
        query = self.model.encode([report[:REPORT_CHARS]])[0]
        cos = np.stack([self.cache[k] for k in keys]) @ query
        # Relative evidence: only files closer than the median file say anything.
        low, high = float(np.median(cos)), float(cos.max())
        scores: np.ndarray = np.clip((cos - low) / max(high - low, 1e-9), 0.0, 1.0)
        return scores
