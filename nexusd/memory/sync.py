"""Markdown → index: incremental sync of given files, reconcile of everything, by content hash.

A chunk is written when it is new or any of its fields changed; it is embedded
only when no stored vector exists for its sha256 under the current model (the
hash is the cache key, so moved or re-saved text is never embedded twice, even
across restarts). Rows are upserted before stale ones are deleted, in batches,
so a sync killed at any point leaves at most extra or stale rows, which the next
reconcile repairs.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from nexusd.config import Config
from nexusd.memory.chunking import Chunk, chunk_markdown, front_matter_warning
from nexusd.memory.embedder import Embedder
from nexusd.memory.sources import list_memory_files, matches, memory_globs
from nexusd.memory.store import MemoryStore, sql_in

log = logging.getLogger("nexusd.memory")

Progress = Callable[[int, int], None]
COMMIT_ROWS = 1024
WRITER_THREAD = "nexusd-index-writer"
FINGERPRINT = ("sha256", "line_start", "line_end", "category", "tags", "date", "heading")


@dataclass(frozen=True)
class SyncReport:
    """What one sync did."""

    files: int = 0
    written: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0
    reused: int = 0
    pending: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class FileChunks:
    """The chunks of one file, or why it was skipped."""

    rel: str
    chunks: tuple[Chunk, ...]
    skipped: str | None = None


def read_chunks(root: Path, rel: str, *, max_bytes: int, max_chars: int) -> FileChunks:
    """Chunk one file; vanished, huge, binary and undecodable files give no chunks."""
    path = root / rel
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            # A link to /etc/passwd named MEMORY.md would be cited in every response.
            return FileChunks(rel, (), "resolves outside the repository; not indexed")
        st = path.stat()
        if not path.is_file():
            return FileChunks(rel, ())
        if st.st_size > max_bytes:
            why = f"{st.st_size} bytes is over memory.max_file_bytes ({max_bytes}); not indexed"
            return FileChunks(rel, (), why)
        data = path.read_bytes()
    except FileNotFoundError:
        return FileChunks(rel, ())
    except OSError as exc:
        return FileChunks(rel, (), f"unreadable ({exc.strerror or exc}); not indexed")
    if b"\0" in data[:8192]:
        return FileChunks(rel, (), "binary file; not indexed")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FileChunks(rel, (), "not UTF-8 text; not indexed")
    warning = front_matter_warning(text)
    if warning:
        log.warning("memory file %s: %s", rel, warning)
    day = date.fromtimestamp(st.st_mtime).isoformat()
    return FileChunks(rel, tuple(chunk_markdown(rel, text, max_chars=max_chars, default_date=day)))


def _row(chunk: Chunk, model: str, vector: Any) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "path": chunk.path,
        "heading": chunk.heading,
        "ordinal": chunk.ordinal,
        "body": chunk.body,
        "search_text": chunk.search_text,
        "sha256": chunk.sha256,
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "category": chunk.category,
        "tags": list(chunk.tags),
        "date": chunk.date,
        "model": model,
        "vector": vector,
    }


def fingerprint(chunk: Chunk) -> tuple[Any, ...]:
    """The fields of a chunk that an indexed row must match, in FINGERPRINT's order."""
    return (
        chunk.sha256,
        chunk.line_start,
        chunk.line_end,
        chunk.category,
        list(chunk.tags),
        chunk.date,
        chunk.heading,
    )


class Syncer:
    """Brings the index in line with markdown files; the I/O shell around chunking."""

    def __init__(
        self, root: Path, config: Config, store: MemoryStore, embedder: Embedder | None
    ) -> None:
        self.root = root
        self.config = config
        self.store = store
        self.embedder = embedder

    @property
    def model_tag(self) -> str:
        """The model (and recipe) stored with new vectors; "" when vectors are pending."""
        return self.embedder.tag if self.embedder is not None and self.embedder.ready else ""

    def read(self, rel: str) -> FileChunks:
        """Chunk one relative path with the configured limits."""
        return read_chunks(
            self.root,
            rel,
            max_bytes=self.config.memory.max_file_bytes,
            max_chars=self.config.memory.chunk_max_chars,
        )

    def indexed(self, paths: Sequence[str] | None) -> dict[str, dict[str, Any]]:
        """Indexed rows (fingerprint fields) for `paths`, or for every path when None."""
        return {r["id"]: r for r in self.indexed_rows(paths)}

    def indexed_rows(self, paths: Sequence[str] | None) -> list[dict[str, Any]]:
        """`indexed` as a list, with any copies of one id (which `indexed` folds) kept."""
        cols = ["id", "path", "model", *FINGERPRINT]
        query = self.store.table.search().select(cols)
        if paths is not None:
            if not paths:
                return []
            query = query.where(sql_in("path", paths))
        try:
            return list(query.limit(None).to_arrow().to_pylist())
        except Exception as exc:
            raise self.store._wrap("read", exc) from exc

    def sync(
        self, rels: Sequence[str], *, everything: bool = False, progress: Progress | None = None
    ) -> SyncReport:
        """Sync these files (or, with `everything`, every memory file and every indexed path)."""
        started = time.perf_counter()
        rows = self.indexed_rows(None if everything else list(rels))
        existing = {r["id"]: r for r in rows}
        # Copies of one id (writers that raced before the write lock, an interrupted
        # upsert): an upsert updates every copy, so they are dropped and written once.
        counts = Counter(r["id"] for r in rows)
        copies = [cid for cid, n in counts.items() if n > 1]
        targets = set(rels)
        if everything:
            targets |= set(list_memory_files(self.root, self.config))
            targets |= {r["path"] for r in existing.values()}
        globs = memory_globs(self.config)
        # A path dropped from the configured sources leaves the index like a deleted file.
        files = [
            self.read(rel) if matches(rel, globs) else FileChunks(rel, ())
            for rel in sorted(targets)
        ]
        skipped = tuple((f.rel, f.skipped) for f in files if f.skipped)
        for rel, why in skipped:
            log.warning("memory file %s: %s", rel, why)
        wanted = {c.id: c for f in files for c in f.chunks}
        model = self.model_tag
        todo: list[Chunk] = []
        for cid, chunk in wanted.items():
            old = existing.get(cid)
            same = old is not None and tuple(old[f] for f in FINGERPRINT) == fingerprint(chunk)
            fresh = old is not None and (old["model"] == model or not model)
            if same and fresh and counts[cid] == 1:
                continue
            todo.append(chunk)
        stale = [cid for cid in existing if cid not in wanted]
        embedded, reused, pending = self._write(todo, model, progress, drop=copies)
        self.store.delete_ids(stale)
        extra = sum(counts[cid] - 1 for cid in copies)
        return SyncReport(
            files=len(files),
            written=len(todo),
            removed=len(stale) + extra,
            unchanged=len(wanted) - len(todo),
            embedded=embedded,
            reused=reused,
            pending=pending,
            skipped=skipped,
            seconds=round(time.perf_counter() - started, 3),
        )

    def _write(
        self, todo: list[Chunk], model: str, progress: Progress | None, drop: Sequence[str] = ()
    ) -> tuple[int, int, int]:
        """Upsert `todo` in batches (after deleting the ids in `drop`, whose stored vectors
        are read first): (embedded, reused, pending) vectors."""
        embedded = reused = pending = 0
        total = len(todo)
        if progress:
            progress(0, total)
        # Even while the model loads, vectors stored for the same text are reused.
        spec = self.embedder.tag if self.embedder is not None else ""
        cache = self.store.vectors_for([c.sha256 for c in todo], spec) if spec else {}
        self.store.delete_ids(drop)
        zeros = np.zeros(self.store.dim, dtype=np.float32)
        # Batch n is committed while batch n + 1 is embedded (LanceDB and torch both work
        # outside the GIL); commits stay in order, one at a time.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=WRITER_THREAD) as writer:
            written: Future[None] | None = None
            for start in range(0, total, COMMIT_ROWS):
                batch = todo[start : start + COMMIT_ROWS]
                need = list(dict.fromkeys(c.sha256 for c in batch if c.sha256 not in cache))
                if need and model:
                    assert self.embedder is not None
                    by_sha = {c.sha256: c for c in batch}
                    vecs = self.embedder.encode_windows([by_sha[s].windows for s in need])
                    for sha, vec in zip(need, vecs, strict=True):
                        cache[sha] = vec
                    embedded += len(need)
                rows = []
                for c in batch:
                    vec = cache.get(c.sha256)
                    if vec is None:
                        pending += 1
                    else:
                        reused += 1
                    row = _row(c, spec if vec is not None else "", zeros if vec is None else vec)
                    rows.append(row)
                if written is not None:
                    written.result()
                    if progress:
                        progress(start, total)
                written = writer.submit(self.store.upsert, rows)
            if written is not None:
                written.result()
                if progress:
                    progress(total, total)
        return embedded, reused - embedded, pending
