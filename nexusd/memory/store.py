"""The LanceDB store of memory chunks: one table, upserts by id, a native full-text index.

Schema of table `chunks` (one row per chunk, see `chunking.Chunk`):

| column | type | meaning |
| --- | --- | --- |
| id | string | `path#heading path#ordinal`, stable across edits of other sections |
| path | string | repository-relative markdown file |
| heading | string | heading path, `Top > Section > Sub` |
| ordinal | int32 | n-th chunk under that heading path in the file |
| body | string | the chunk's text (snippets come from it) |
| search_text | string | heading path + body: embedded, and full-text indexed |
| sha256 | string | sha256 of search_text: the embedding cache key |
| line_start, line_end | int32 | 1-based inclusive line range in the file |
| category | string | front matter `category:`, else the `## Section` it sits in, lowercased |
| tags | list<string> | front matter tags and inline `#tags` |
| date | string | `YYYY-MM-DD`: the daily note's date, else front matter `date`, else mtime |
| model | string | model that made `vector`; "" while the model was unavailable (pending) |
| vector | fixed_size_list<float32>[dim] | unit-length embedding (zeros while pending) |

The markdown is canonical: this table can be deleted at any time and rebuilt.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from nexusd.errors import IndexStoreError

log = logging.getLogger("nexusd.memory")

TABLE = "chunks"
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
DEFAULT_DIM = 384  # all-MiniLM-L6-v2, used until a model says otherwise
# The tokenizer of the full-text index, spelled out rather than left to `FTS()` defaults:
# LanceDB's defaults changed between releases (older ones, which lancedb>=0.20 still
# allows, did no stemming, stop-word removal or ASCII folding), and an index keeps the
# settings it was built with. English stemming lets "caching" match "cached".
FTS_TOKENIZER: dict[str, Any] = {
    "base_tokenizer": "simple",
    "language": "English",
    "max_token_length": 40,
    "lower_case": True,
    "stem": True,
    "remove_stop_words": True,
    "ascii_folding": True,
}
# Where an index does not report its settings, compare how it tokenizes this instead.
_FTS_PROBE = "The Cachés were running"


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


def fts_config() -> Any:
    """The full-text index configuration of `search_text`."""
    from lancedb.index import FTS

    return FTS(**FTS_TOKENIZER)


def fts_mismatch(table: Any) -> list[str]:
    """Tokenizer settings in which the table's full-text index differs from FTS_TOKENIZER
    (["no index"] without one)."""
    import lancedb

    for index in table.list_indices():
        if index.index_type != "FTS" or list(index.columns) != ["search_text"]:
            continue
        details = index.index_details
        if isinstance(details, dict):
            return [k for k, v in FTS_TOKENIZER.items() if details.get(k) != v]
        # Settings not reported (older index formats, remote tables): compare behaviour.
        have = [t.text for t in table.tokenize(_FTS_PROBE, column="search_text")]
        want = [t.text for t in lancedb.tokenize(_FTS_PROBE, **FTS_TOKENIZER)]
        return [] if have == want else ["tokens"]
    return ["no index"]


def is_local(uri: str) -> bool:
    """True for a filesystem path (not s3://, gs://, db:// …)."""
    return "://" not in uri or uri.startswith("file://")


class MemoryStore:
    """The chunks table at `uri`; every LanceDB failure surfaces as IndexStoreError."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._db: Any = None
        self._table: Any = None
        self.dim = 0

    def _wrap(self, what: str, exc: Exception) -> IndexStoreError:
        return IndexStoreError(
            f"memory index at {self.uri}: {what} failed ({type(exc).__name__}: {exc})",
            hint="run `nexusd memory reindex` to rebuild it from the markdown",
        )

    def open(self, dim: int | None) -> bool:
        """Open or create the table for `dim`-float vectors (None: keep the table's, else
        DEFAULT_DIM); a table of another width is dropped. True when it was created."""
        import lancedb

        try:
            if is_local(self.uri):
                Path(self.uri.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
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
        """Delete the whole index (local directory or remote table)."""
        import shutil

        self._table = None
        if is_local(self.uri):
            shutil.rmtree(self.uri.removeprefix("file://"), ignore_errors=True)
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

    def _nearest(self, query: Any, limit: int, where: str | None) -> list[dict[str, Any]]:
        """Rows nearest to one query vector, or to each of a list of them (with the column
        `query_index`), by cosine distance among embedded rows."""
        clause = "model != ''" + (f" AND ({where})" if where else "")
        try:
            found = self.table.search(query, vector_column_name="vector")
            found = found.distance_type("cosine").where(clause, prefilter=True)
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

    def keyword_search(self, text: str, limit: int, where: str | None) -> list[dict[str, Any]]:
        """BM25 matches from the native full-text index (unindexed rows are scanned)."""
        try:
            query = self.table.search(text, query_type="fts", fts_columns="search_text")
            if where:
                query = query.where(where, prefilter=True)
            return list(query.select([*HIT_COLUMNS, "_score"]).limit(limit).to_list())
        except Exception as exc:
            raise self._wrap("keyword search", exc) from exc

    def optimize(self, cleanup_older_than: timedelta) -> None:
        """Compact fragments, fold new rows into the indexes, drop old versions; build the
        vector index once the table is large enough."""
        try:
            table = self.table
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
            frag = st["fragment_stats"] if isinstance(st, dict) else st.fragment_stats
            rows = st["num_rows"] if isinstance(st, dict) else st.num_rows
            num = frag["num_fragments"] if isinstance(frag, dict) else frag.num_fragments
            small = (
                frag["num_small_fragments"] if isinstance(frag, dict) else frag.num_small_fragments
            )
            return {
                "rows": int(rows),
                "fragments": int(num),
                "small_fragments": int(small),
                "fts_unindexed_rows": unindexed,
                "version": int(table.version),
            }
        except Exception as exc:
            raise self._wrap("stats", exc) from exc
