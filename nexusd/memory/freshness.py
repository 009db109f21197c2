"""Freshness of the memory index: what is on disk, what is indexed, and the drift between."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from nexusd.memory.sources import list_memory_files

if TYPE_CHECKING:
    from nexusd.memory.embedder import Embedder
    from nexusd.memory.store import MemoryStore
    from nexusd.memory.sync import Syncer


@dataclass(frozen=True)
class MemoryStats:
    """Counts for `nexusd memory stats`; zero stale, missing, orphaned and duplicates means
    no drift."""

    index_uri: str
    files_on_disk: int
    files_skipped: int
    chunks_on_disk: int
    chunks_indexed: int
    stale: int
    missing: int
    orphaned: int
    duplicates: int  # extra rows of a chunk id (each should be there once)
    pending_vectors: int
    fragments: int
    small_fragments: int
    fts_unindexed_rows: int
    version: int
    model: str
    model_status: str
    model_error: str | None
    # onnx | torch (None until loaded): which runtime embeds, and why that one.
    model_runtime: str | None = None
    model_runtime_reason: str | None = None

    @property
    def drift(self) -> int:
        """Chunks that differ between the markdown and the index."""
        return self.stale + self.missing + self.orphaned + self.duplicates

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**asdict(self), "drift": self.drift}


def compute_stats(syncer: Syncer, store: MemoryStore, embedder: Embedder) -> MemoryStats:
    """Chunk every memory file and compare with the index, field by field."""
    from nexusd.memory.sync import FINGERPRINT, fingerprint

    rels = list_memory_files(syncer.root, syncer.config)
    files = [syncer.read(rel) for rel in rels]
    wanted = {c.id: c for f in files for c in f.chunks}
    rows = syncer.indexed_rows(None)
    indexed = {r["id"]: r for r in rows}
    # Vectors made by another model (or recipe) are stale too: the next sync remakes them.
    other_model = {
        cid for cid, r in indexed.items() if embedder.ready and r["model"] not in ("", embedder.tag)
    }
    stale = sum(
        1
        for cid, chunk in wanted.items()
        if cid in indexed
        and (
            cid in other_model or tuple(indexed[cid][f] for f in FINGERPRINT) != fingerprint(chunk)
        )
    )
    table = store.stats()
    return MemoryStats(
        index_uri=store.uri,
        files_on_disk=len(rels),
        files_skipped=sum(1 for f in files if f.skipped),
        chunks_on_disk=len(wanted),
        chunks_indexed=len(indexed),
        stale=stale,
        missing=sum(1 for cid in wanted if cid not in indexed),
        orphaned=sum(1 for cid in indexed if cid not in wanted),
        duplicates=len(rows) - len(indexed),
        pending_vectors=sum(1 for r in indexed.values() if not r["model"]),
        fragments=table["fragments"],
        small_fragments=table["small_fragments"],
        fts_unindexed_rows=table["fts_unindexed_rows"],
        version=table["version"],
        model=embedder.spec,
        model_status=embedder.status,
        model_error=embedder.error,
        model_runtime=embedder.runtime,
        model_runtime_reason=embedder.runtime_reason,
    )
