"""The chunks table's vectors held in memory, for exact vector search without a table scan.

LanceDB searches a table without a vector index by scanning every stored vector on each
query: 12-18 ms for 10k chunks of 384 floats, where a dot product over the same matrix
held in memory takes under a millisecond. A long-lived process (the daemon, `nexusd mcp`
without one) keeps a `Snapshot` of the table: the normalised vectors, the hit columns,
and the filter columns dictionary-encoded, so a filter is evaluated once per distinct
value. A snapshot belongs to one table object and one table version: any write (sync,
ingest, optimize, reindex) makes the next search rebuild it.

Ranking is LanceDB's exact cosine ranking: the same rows pass the filters (see
`filters.Filters`), and `_distance` is the cosine distance. Tables past `max_rows`, or
with a vector index (whose approximate ranking this would not reproduce), are searched
by LanceDB as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nexusd.memory.filters import Filters
from nexusd.memory.store import HIT_COLUMNS, VECTOR_INDEX_MIN_ROWS, MemoryStore

log = logging.getLogger("nexusd.memory")
# Below the size at which optimize() builds a vector index: past it LanceDB answers from
# the index, and 50k vectors of 384 floats are already 77 MB of memory.
DEFAULT_MAX_ROWS = VECTOR_INDEX_MIN_ROWS


@dataclass(frozen=True)
class Encoded:
    """A string column as distinct values and one code per row (len(values): null)."""

    values: tuple[str, ...]
    codes: Any  # int32 array, one per row

    def mask(self, passes: Callable[[str | None], bool]) -> Any:
        """Rows whose value passes (the predicate is asked once per distinct value)."""
        import numpy as np

        keep = np.fromiter((passes(v) for v in self.values), dtype=bool, count=len(self.values))
        return np.append(keep, passes(None))[self.codes]


@dataclass(frozen=True)
class Snapshot:
    """One version of the table in memory: vectors, hit columns, filter columns."""

    version: int
    matrix: Any  # float32 (rows, dim), unit rows
    searchable: Any  # bool per row: embedded, as `MemoryStore._nearest`'s pending filter says
    hits: Any  # pyarrow.Table of HIT_COLUMNS
    category: Encoded
    date: Encoded
    path: Encoded
    index: dict[str, int]  # id → row

    @property
    def rows(self) -> int:
        """Rows in the snapshot."""
        return int(self.matrix.shape[0])

    def rows_for(self, ids: list[str]) -> list[dict[str, Any]] | None:
        """The hit columns of these chunks, in this order; None when one is not here."""
        import numpy as np

        try:
            at = np.fromiter((self.index[i] for i in ids), dtype=np.int64, count=len(ids))
        except KeyError:
            return None
        return list(self.hits.take(at).to_pylist())

    def mask(self, filters: Filters) -> Any:
        """Rows the LanceDB prefilter of `filters` lets through."""
        keep = self.searchable
        if filters.on_category:
            keep = keep & self.category.mask(filters.category_passes)
        if filters.on_date:
            keep = keep & self.date.mask(filters.date_passes)
        if filters.path_glob:
            keep = keep & self.path.mask(filters.path_passes)
        return keep

    def nearest(self, vectors: Any, limit: int, filters: Filters) -> list[list[dict[str, Any]]]:
        """Per query vector, the `limit` nearest rows that pass, nearest first, as
        LanceDB returns them (HIT_COLUMNS and `_distance`)."""
        import numpy as np

        rows = np.flatnonzero(self.mask(filters))
        queries = _unit_rows(np.array(vectors, dtype=np.float32).reshape(len(vectors), -1))
        # Gathering the passing rows copies them: skip it when (nearly) all pass.
        matrix = self.matrix if len(rows) == self.rows else self.matrix[rows]
        top = min(limit, len(rows))
        out: list[list[dict[str, Any]]] = []
        for query in queries:
            # One product per query, not one for the batch: a batched product rounds
            # differently, and a query must score the same in a batch as alone.
            sim = matrix @ query
            pick = np.argpartition(-sim, top - 1)[:top] if top < len(rows) else np.arange(top)
            # Nearest first; equal similarities in table order.
            pick = pick[np.lexsort((pick, -sim[pick]))]
            found = self.hits.take(rows[pick]).to_pylist()
            for row, s in zip(found, sim[pick].tolist(), strict=True):
                row["_distance"] = 1.0 - s
            out.append(found)
        return out


def _unit_rows(matrix: Any) -> Any:
    """Scale each row of a float32 matrix to unit length in place (zero rows stay zero),
    so a dot product is the cosine similarity LanceDB ranks by."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    matrix /= norms
    return matrix


def _encode(column: Any) -> Encoded:
    import numpy as np
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column).combine_chunks()
    values = tuple(str(v) for v in encoded.dictionary.to_pylist())
    codes = np.asarray(encoded.indices.fill_null(len(values)), dtype=np.int32)
    return Encoded(values, codes)


def read_snapshot(table: Any) -> Snapshot:
    """Read the table's current version into memory."""
    import numpy as np
    import pyarrow.compute as pc

    version = int(table.version)
    data = table.search().select([*HIT_COLUMNS, "model", "vector"]).limit(None).to_arrow()
    n = data.num_rows
    flat = data.column("vector").combine_chunks().flatten()
    # An empty table (a fresh repository's memory holds only template prose, which is not
    # indexed) has no rows to infer the width from: the column's type says it.
    width = getattr(data.schema.field("vector").type, "list_size", 0) if n == 0 else -1
    matrix = _unit_rows(np.array(flat, dtype=np.float32).reshape(n, width))
    model = data.column("model")
    if pc.any(pc.equal(model, "")).as_py():
        # `_nearest` adds `model != ''` when rows are pending: nulls fail it too.
        searchable = np.asarray(pc.fill_null(pc.not_equal(model, ""), False), dtype=bool)
    else:
        searchable = np.ones(n, dtype=bool)
    return Snapshot(
        version=version,
        matrix=matrix,
        searchable=searchable,
        hits=data.select(HIT_COLUMNS).combine_chunks(),  # take() on one chunk: 4x faster
        category=_encode(data.column("category")),
        date=_encode(data.column("date")),
        path=_encode(data.column("path")),
        index={str(i): n for n, i in enumerate(data.column("id").to_pylist())},
    )


class VectorCache:
    """The snapshot of one store's table, rebuilt when the table or its version changes."""

    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.max_rows = max_rows
        self._lock = threading.Lock()
        # (table object, its snapshot) in one tuple, read and replaced whole: a reader never
        # pairs the snapshot of one table with another table.
        self._held: tuple[Any, Snapshot] | None = None
        self._skip: tuple[Any, int] | None = None  # (table, version) LanceDB searches

    def _current(self, table: Any, version: int) -> Snapshot | None:
        held = self._held
        if held is not None and held[0] is table and held[1].version == version:
            return held[1]
        return None

    def snapshot(self, store: MemoryStore) -> Snapshot | None:
        """The current snapshot of `store`'s table, or None when LanceDB should search it
        (too many rows, a vector index, a failed read)."""
        if self.max_rows <= 0:
            return None
        table = store.table
        version = int(table.version)
        snap = self._current(table, version)
        if snap is not None:
            return snap
        with self._lock:  # one reader builds it; the others wait and share it
            snap = self._current(table, version)
            skip = self._skip
            if snap is not None or (skip is not None and skip[0] is table and skip[1] == version):
                return snap
            self._held = None
            try:
                if not self._worth_holding(table):
                    self._skip = (table, version)
                    return None
                snap = read_snapshot(table)
            except Exception:
                # LanceDB's own search still works (or reports the failure itself).
                log.warning("memory vectors could not be read into memory", exc_info=True)
                self._skip = (table, version)
                return None
            self._held = (table, snap)
            return snap

    def refresh(self, store: MemoryStore) -> None:
        """After a write: rebuild now if searches use a snapshot, so no search waits for it."""
        if self._held is not None:
            self.snapshot(store)

    def _worth_holding(self, table: Any) -> bool:
        if int(table.count_rows()) > self.max_rows:
            return False
        return not any("vector" in idx.columns for idx in table.list_indices())


def nearest(
    store: MemoryStore, snap: Snapshot | None, vectors: Any, limit: int, filters: Filters
) -> list[list[dict[str, Any]]]:
    """Per query vector, the nearest rows that pass `filters`: from the snapshot when there
    is one, else from LanceDB."""
    if snap is not None:
        return snap.nearest(vectors, limit, filters)
    return store.vector_search_many([list(map(float, v)) for v in vectors], limit, filters.where())


def keyword(
    store: MemoryStore, snap: Snapshot | None, text: str, limit: int, where: str | None
) -> list[dict[str, Any]]:
    """LanceDB's full-text matches; with a snapshot, only ids and scores are read from the
    table (2 ms of ~8 on 10k chunks) and the hit columns come from memory."""
    if snap is not None:
        found = store.keyword_search(text, limit, where, columns=("id",))
        rows = snap.rows_for([str(hit["id"]) for hit in found])
        if rows is not None:
            for row, hit in zip(rows, found, strict=True):
                row["_score"] = hit["_score"]
            return rows
        # A row newer than the snapshot (written during this search): read it all.
    return store.keyword_search(text, limit, where)
