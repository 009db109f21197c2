"""The LanceDB store of memory chunks: one table, upserts by id, a native full-text index.

Schema of table `chunks` (one row per chunk, see `chunking.Chunk`):

| column | type | meaning |
| --- | --- | --- |
| id | string | `path#heading path#ordinal`, stable across edits of other sections |
| path | string | repository-relative markdown file |
| heading | string | heading path, `Top > Section > Sub` |
| ordinal | int32 | n-th chunk under that heading path in the file |
| body | string | the chunk's text (snippets come from it) |
| search_text | string | heading path + body: full-text indexed, and embedded (by windows) |
| sha256 | string | sha256 of search_text: the embedding cache key |
| line_start, line_end | int32 | 1-based inclusive line range in the file |
| category | string | front matter `category:`, else the `## Section` it sits in, lowercased |
| tags | list<string> | front matter tags and inline `#tags` |
| date | string | `YYYY-MM-DD`: the daily note's date, else front matter `date`, else mtime |
| model | string | `Embedder.tag` (model + recipe) that made `vector`; "" while pending |
| vector | fixed_size_list<float32>[dim] | unit-length embedding (zeros while pending) |

The markdown is canonical: this table can be deleted at any time and rebuilt.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from typing import Any

from nexusd.errors import IndexStoreError
from nexusd.lance import folder_lock, import_lancedb, local_folder
from nexusd.memory.fts import fts_config, fts_mismatch

log = logging.getLogger("nexusd.memory")

TABLE = "chunks"
# Beside the table: held while a process opens (and maybe creates) it.
LOCK_FILE = "memory.lock"
META_COLUMNS = ["id", "path", "sha256", "model"]
HIT_COLUMNS = [
    "id",
    "path",
    "heading",
    "body",
    "line_start",
    "line_end",
    "category",
    "tags",
    "date",
]
_BATCH = 400
# Past this many rows optimize() builds an ANN index (IVF + HNSW, scalar-quantised):
# a flat scan over 100k 384-float vectors costs more than the p99 budget of a search.
VECTOR_INDEX_MIN_ROWS = 50_000
# optimize() merges all fragments into one once edits touch this share of the rows: a
# table with its edits beside it (and the rows they replaced still scanned) searched
# ~1.2x slower than a fresh one after 1,000 edits of 10k chunks; merging 10k rows
# takes ~0.15 s, so it is worth it only when the edits are many.
MERGE_SHARE = 0.05
DEFAULT_DIM = 384  # all-MiniLM-L6-v2, used until a model says otherwise


def sql_str(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    """`column IN (…)` for string values."""
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


def _batches(items: Sequence[Any], size: int = _BATCH) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def schema(dim: int) -> Any:
    """The Arrow schema of the chunks table for vectors of `dim` floats."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("path", pa.string()),
            pa.field("heading", pa.string()),
            pa.field("ordinal", pa.int32()),
            pa.field("body", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("sha256", pa.string()),
            pa.field("line_start", pa.int32()),
            pa.field("line_end", pa.int32()),
            pa.field("category", pa.string()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("date", pa.string()),
            pa.field("model", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _field(stats: Any, name: str) -> Any:
    """A field of LanceDB's table stats: a dict locally, an object from some versions."""
    return stats[name] if isinstance(stats, dict) else getattr(stats, name)


class MemoryStore:
    """The chunks table at `uri`; every LanceDB failure surfaces as IndexStoreError."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._db: Any = None
        self._table: Any = None
        self._pending: tuple[int, bool] | None = None  # (table version, pending rows?)
        self.dim = 0

    def _wrap(self, what: str, exc: Exception) -> IndexStoreError:
        return IndexStoreError(
            f"memory index at {self.uri}: {what} failed ({type(exc).__name__}: {exc})",
            hint="run `nexusd memory reindex` to rebuild it from the markdown",
        )

    def open(self, dim: int | None) -> bool:
        """Open or create the table for `dim`-float vectors (None: keep the table's, else
        DEFAULT_DIM); a table of another width is dropped. True when it was created."""
        lancedb = import_lancedb()

        self._pending = None  # versions of another table say nothing about this one
        local = local_folder(self.uri)
        # Two processes opening a new index at once (two `nexusd mcp`, no daemon): one saw
        # the other's half-created table and failed with "Table 'chunks' was not found".
        with folder_lock(local, LOCK_FILE) if local else contextlib.nullcontext():
            return self._open(lancedb, dim)

    def _open(self, lancedb: Any, dim: int | None) -> bool:
        try:
            self._db = lancedb.connect(self.uri)
            if TABLE in self._db.list_tables().tables:
                table = self._db.open_table(TABLE)
                self.dim = int(table.schema.field("vector").type.list_size)
                table.count_rows()
                self._table = table
                if dim is None or self.dim == dim:
                    self._refresh_fts(table)
                    return False
                log.warning("memory index vectors have %d floats, model gives %d", self.dim, dim)
                self._db.drop_table(TABLE)
            dim = dim or DEFAULT_DIM
            self._table = self._db.create_table(TABLE, schema=schema(dim))
            self._table.create_index("search_text", config=fts_config())
            self.dim = dim
            return True
        except IndexStoreError:
            raise
        except Exception as exc:
            self._table = None
            raise self._wrap("open", exc) from exc

    def _refresh_fts(self, table: Any) -> None:
        """Rebuild the full-text index when it was built with other tokenizer settings."""
        differ = fts_mismatch(table)
        if differ:
            log.info(
                "memory index at %s: full-text index differs from the tokenizer settings (%s); "
                "rebuilding it",
                self.uri,
                ", ".join(differ),
            )
            table.create_index("search_text", config=fts_config(), replace=True)

    @property
    def table(self) -> Any:
        """The open LanceDB table."""
        if self._table is None:
            raise IndexStoreError(f"memory index at {self.uri} is not open")
        return self._table

    def destroy(self) -> None:
        """Delete the chunks table (its folder when local, so a corrupt one goes too)."""
        import shutil

        self._table, self._pending = None, None
        local = local_folder(self.uri)
        if local is not None:
            # Only this table's folder: the code index and the lock files live beside it.
            shutil.rmtree(local / f"{TABLE}.lance", ignore_errors=True)
            return
        try:
            if self._db is not None:
                self._db.drop_table(TABLE)
        except Exception as exc:
            raise self._wrap("drop", exc) from exc

    def meta(self) -> dict[str, tuple[str, str, str]]:
        """id → (path, sha256, model) of every indexed chunk."""
        try:
            rows = self.table.search().select(META_COLUMNS).limit(None).to_arrow()
        except Exception as exc:
            raise self._wrap("read", exc) from exc
        cols = [rows.column(c).to_pylist() for c in META_COLUMNS]
        return {i: (p, s, m) for i, p, s, m in zip(*cols, strict=True)}

    def vectors_for(self, shas: Sequence[str], model: str) -> dict[str, Any]:
        """Stored vectors (float32 arrays) by content hash, made by `model`: the embedding
        cache."""
        import numpy as np

        found: dict[str, Any] = {}
        try:
            for batch in _batches(sorted(set(shas))):
                where = f"{sql_in('sha256', batch)} AND model = {sql_str(model)}"
                tbl = self.table.search().where(where).select(["sha256", "vector"])
                got = tbl.limit(None).to_arrow()
                if got.num_rows == 0:
                    continue
                flat = got.column("vector").combine_chunks().flatten()
                mat = np.asarray(flat, dtype=np.float32).reshape(got.num_rows, -1)
                for sha, vec in zip(got.column("sha256").to_pylist(), mat, strict=True):
                    found[sha] = vec
        except Exception as exc:
            raise self._wrap("read", exc) from exc
        return found

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        """Insert or replace rows by id, in one commit."""
        if not rows:
            return
        import numpy as np
        import pyarrow as pa

        full = schema(self.dim)
        # Vectors go in as one float32 buffer: a Python float per component is slow.
        vectors = np.asarray([r["vector"] for r in rows], dtype=np.float32).reshape(-1)
        meta = [{k: v for k, v in r.items() if k != "vector"} for r in rows]
        data = pa.Table.from_pylist(meta, schema=pa.schema([f for f in full if f.name != "vector"]))
        data = data.append_column(
            full.field("vector"), pa.FixedSizeListArray.from_arrays(pa.array(vectors), self.dim)
        )
        try:
            (
                self.table.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(data)
            )
        except Exception as exc:
            raise self._wrap("write", exc) from exc

    def delete_ids(self, ids: Iterable[str]) -> None:
        """Remove chunks by id."""
        try:
            for batch in _batches(sorted(set(ids))):
                self.table.delete(sql_in("id", batch))
        except Exception as exc:
            raise self._wrap("delete", exc) from exc

    def get(self, chunk_id: str) -> dict[str, Any] | None:
        """The row of one chunk (its HIT_COLUMNS), or None when no chunk has this id."""
        try:
            rows = self.table.search().where(f"id = {sql_str(chunk_id)}").select(HIT_COLUMNS)
            found = list(rows.limit(1).to_list())
        except Exception as exc:
            raise self._wrap("read", exc) from exc
        if not found:
            return None
        row = dict(found[0])
        row["tags"] = list(row.get("tags") or ())
        return row

    def _has_pending(self) -> bool:
        """True when some rows wait for their vectors (counted once per table version)."""
        version = int(self.table.version)
        seen = self._pending
        if seen is None or seen[0] != version:
            seen = (version, int(self.table.count_rows("model = ''")) > 0)
            self._pending = seen
        return seen[1]

    def _nearest(self, query: Any, limit: int, where: str | None) -> list[dict[str, Any]]:
        """Rows nearest to one query vector, or to each of a list of them (with the column
        `query_index`), by cosine distance among embedded rows."""
        # Filter out pending rows (zero vectors) only when there are some: the filter cost
        # 2 ms a search on 10k rows, 8 ms on a table with a long edit history.
        clause = where
        try:
            if self._has_pending():
                clause = "model != ''" + (f" AND ({where})" if where else "")
            found = self.table.search(query, vector_column_name="vector").distance_type("cosine")
            if clause:
                found = found.where(clause, prefilter=True)
            return list(found.select([*HIT_COLUMNS, "_distance"]).limit(limit).to_list())
        except Exception as exc:
            raise self._wrap("vector search", exc) from exc

    def vector_search(
        self, vector: Sequence[float], limit: int, where: str | None
    ) -> list[dict[str, Any]]:
        """Nearest chunks by cosine distance among embedded rows."""
        return self._nearest(list(vector), limit, where)

    def vector_search_many(
        self, vectors: Sequence[Sequence[float]], limit: int, where: str | None
    ) -> list[list[dict[str, Any]]]:
        """`vector_search` for several query vectors in one scan: a list of hits per vector."""
        if len(vectors) == 1:
            return [self.vector_search(vectors[0], limit, where)]
        found: list[list[dict[str, Any]]] = [[] for _ in vectors]
        for row in self._nearest([list(v) for v in vectors], limit, where):
            found[int(row.pop("query_index"))].append(row)
        for hits in found:
            hits.sort(key=lambda r: float(r["_distance"]))
        return found

    def keyword_search(
        self, text: str, limit: int, where: str | None, columns: Sequence[str] = HIT_COLUMNS
    ) -> list[dict[str, Any]]:
        """BM25 matches from the native full-text index (unindexed rows are scanned)."""
        from lancedb.query import MatchQuery

        try:
            # A match query, never LanceDB's query string: text in double quotes would be a
            # phrase query, which an index without token positions refuses.
            # (pydantic's field defaults are invisible to mypy, hence the ignore)
            match = MatchQuery(text, "search_text")  # type: ignore[call-arg]
            query = self.table.search(match, query_type="fts")
            if where:
                query = query.where(where, prefilter=True)
            return list(query.select([*columns, "_score"]).limit(limit).to_list())
        except Exception as exc:
            raise self._wrap("keyword search", exc) from exc

    def optimize(self, cleanup_older_than: timedelta) -> None:
        """Compact fragments, fold new rows into the indexes, drop old versions; build the
        vector index once the table is large enough."""
        try:
            table = self.table
            table.optimize(cleanup_older_than=cleanup_older_than)
            if self._worth_merging(table):
                # Compaction never merges fragments an index covers with ones it does not,
                # so new rows land beside the indexed fragment. The first pass indexed them;
                # the second merges everything and drops the deleted rows.
                table.optimize(cleanup_older_than=cleanup_older_than)
            rows = int(table.count_rows())
            has_vector_index = any("vector" in idx.columns for idx in table.list_indices())
            if rows >= VECTOR_INDEX_MIN_ROWS and not has_vector_index:
                table.create_index(
                    metric="cosine",
                    index_type="IVF_HNSW_SQ",
                    num_partitions=max(1, rows // 8192),
                    vector_column_name="vector",
                )
        except Exception as exc:
            raise self._wrap("optimize", exc) from exc

    @staticmethod
    def _worth_merging(table: Any) -> bool:
        """True when rows outside the biggest fragment (edits since the last merge, and
        the rows they replaced) reach MERGE_SHARE of the table."""
        st = table.stats()
        frags, rows = _field(st, "fragment_stats"), int(_field(st, "num_rows"))
        count = int(_field(frags, "num_fragments"))
        if count < 2:
            return False
        lengths = _field(frags, "lengths")  # rows stored per fragment, deleted ones included
        stored = int(_field(lengths, "mean")) * count
        outside = stored - int(_field(lengths, "max")) + (stored - rows)
        return outside >= MERGE_SHARE * max(rows, 1)

    def stats(self) -> dict[str, int]:
        """Rows, fragments, small fragments, and rows the full-text index has not seen yet."""
        try:
            table = self.table
            st = table.stats()
            unindexed = 0
            for index in table.list_indices():
                idx = table.index_stats(index.name)
                if idx is not None:
                    unindexed = max(unindexed, int(idx.num_unindexed_rows))
            frag = _field(st, "fragment_stats")
            return {
                "rows": int(_field(st, "num_rows")),
                "fragments": int(_field(frag, "num_fragments")),
                "small_fragments": int(_field(frag, "num_small_fragments")),
                "fts_unindexed_rows": unindexed,
                "version": int(table.version),
            }
        except Exception as exc:
            raise self._wrap("stats", exc) from exc
