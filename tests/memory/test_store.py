"""The chunks table: its full-text index (English word forms, indexes built with other
settings) and what optimize() leaves after many small edits."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from nexusd.lance import folder_lock
from nexusd.memory.fts import fts_mismatch
from nexusd.memory.search import Filters, SearchSettings, run_search
from nexusd.memory.store import LOCK_FILE, MemoryStore

DIM = 4
NOTES = {
    "memory/ci.md": "We cached the pip downloads, so CI got faster.",
    "memory/daemon.md": "The daemon restarts cleanly after a crash.",
}


def rows(notes: dict[str, str]) -> list[dict[str, Any]]:
    """One pending (not yet embedded) chunk per note, as the syncer writes them."""
    return [
        {
            "id": f"{path}##0",
            "path": path,
            "heading": "",
            "ordinal": 0,
            "body": text,
            "search_text": text,
            "sha256": "",
            "line_start": 1,
            "line_end": 1,
            "category": "",
            "tags": [],
            "date": "2026-01-01",
            "model": "",
            "vector": [0.0] * DIM,
        }
        for path, text in notes.items()
    ]


def keyword_paths(store: MemoryStore, query: str) -> list[str]:
    """Paths found by the product's keyword mode, best first."""
    results = run_search(
        store, None, query, k=5, mode="keyword", filters=Filters(), settings=SearchSettings()
    )
    assert results.mode == "keyword"
    return [hit.path for hit in results.hits]


@pytest.mark.parametrize("optimized", [False, True])
def test_keyword_mode_matches_other_word_forms(tmp_path: Path, optimized: bool) -> None:
    store = MemoryStore(str(tmp_path / "index"))
    store.open(DIM)
    store.upsert(rows(NOTES))
    if optimized:  # rows folded into the index; else the unindexed rows are scanned
        store.optimize(timedelta(hours=1))
    assert keyword_paths(store, "caching") == ["memory/ci.md"]
    assert keyword_paths(store, "restarting daemons") == ["memory/daemon.md"]
    assert keyword_paths(store, "the") == []  # stop words alone match nothing


@pytest.mark.parametrize("dim", [DIM, None])
def test_an_index_built_with_other_tokenizer_settings_is_rebuilt_once_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, dim: int | None
) -> None:
    from lancedb.index import FTS

    uri = str(tmp_path / "index")
    old = MemoryStore(uri)
    old.open(DIM)
    old.upsert(rows(NOTES))
    # What `FTS()` built in older LanceDB releases: exact words only.
    legacy = FTS(stem=False, remove_stop_words=False, ascii_folding=False)
    old.table.create_index("search_text", config=legacy, replace=True)
    old.optimize(timedelta(hours=1))
    assert keyword_paths(old, "caching") == []
    assert set(fts_mismatch(old.table)) == {"stem", "remove_stop_words", "ascii_folding"}

    with caplog.at_level(logging.INFO, logger="nexusd.memory"):
        store = MemoryStore(uri)
        assert store.open(dim) is False
        MemoryStore(uri).open(dim)  # the second open finds nothing to do
    lines = [r.getMessage() for r in caplog.records if "full-text index" in r.getMessage()]
    assert len(lines) == 1, lines
    assert uri in lines[0] and "stem" in lines[0]
    assert fts_mismatch(store.table) == []
    assert store.table.count_rows() == len(NOTES)
    assert keyword_paths(store, "caching") == ["memory/ci.md"]


@pytest.mark.parametrize(("edits", "fragments"), [(3, 2), (30, 1)])
def test_optimize_merges_fragments_once_edits_reach_a_share_of_the_table(
    tmp_path: Path, edits: int, fragments: int
) -> None:
    store = MemoryStore(str(tmp_path / "index"))
    store.open(DIM)
    notes = {f"memory/n{i}.md": f"note {i} about the build cache" for i in range(300)}
    store.upsert(rows(notes))
    store.optimize(timedelta(hours=1))
    for i in range(edits):  # one synced note edit at a time, as the watcher does
        store.upsert(rows({f"memory/n{i * 7}.md": f"note {i * 7} revised zebra{i}"}))
    store.optimize(timedelta(hours=1))
    stats = store.stats()
    # A few edits stay beside the indexed fragment (rewriting the table would cost more
    # than it saves); past MERGE_SHARE everything is one fragment again, nothing lost.
    assert (stats["rows"], stats["fragments"], stats["fts_unindexed_rows"]) == (300, fragments, 0)
    assert keyword_paths(store, f"zebra{edits - 1}") == [f"memory/n{(edits - 1) * 7}.md"]


def test_vector_search_skips_pending_rows_and_sees_them_once_embedded(tmp_path: Path) -> None:
    store = MemoryStore(str(tmp_path / "index"))
    store.open(DIM)
    notes = {"memory/a.md": "alpha", "memory/b.md": "beta", "memory/c.md": "gamma"}
    table = rows(notes)
    for row, vector in zip(table[:2], ([1.0, 0, 0, 0], [0, 1.0, 0, 0]), strict=True):
        row.update(model="m", vector=vector)
    store.upsert(table)  # c.md is pending: a zero vector, no model yet
    # Pending rows are filtered out explicitly (LanceDB 0.40 also drops zero vectors under
    # cosine distance, but that is not a promise), and only while there are some.
    assert store._has_pending()
    query = [0.5, 0.5, 0.5, 0.0]
    assert sorted(h["path"] for h in store.vector_search(query, 10, None)) == [
        "memory/a.md",
        "memory/b.md",
    ]
    table[2].update(model="m", vector=[0, 0, 1.0, 0])
    store.upsert(table[2:])
    assert not store._has_pending()  # the next table version is counted again
    found = store.vector_search_many([query, [0, 0, 1.0, 0]], 10, "path != 'memory/a.md'")
    assert [sorted(h["path"] for h in hits) for hits in found] == [
        ["memory/b.md", "memory/c.md"],
        ["memory/b.md", "memory/c.md"],
    ]
    assert found[1][0]["path"] == "memory/c.md"


def test_opening_a_new_index_waits_for_another_process_creating_it(tmp_path: Path) -> None:
    # Two `nexusd mcp` without a daemon once met halfway: "Table 'chunks' was not found".
    uri = tmp_path / "index"
    opened: list[bool] = []
    with folder_lock(uri, LOCK_FILE):  # another process, in the middle of creating it
        other = threading.Thread(target=lambda: opened.append(MemoryStore(str(uri)).open(384)))
        other.start()
        other.join(0.5)
        assert other.is_alive() and not opened
        assert MemoryStore(str(tmp_path / "elsewhere")).open(384)  # another index: no wait
    other.join(30)
    assert opened == [True]  # created once, by the one that got the lock
    assert MemoryStore(str(uri)).open(384) is False


@pytest.mark.parametrize("optimized", [False, True])
@pytest.mark.parametrize("query", ['"pip downloads"', '"pip', 'pip"', '"', "'pip'", "pip*"])
def test_quotes_and_operators_in_a_query_are_searched_as_words(
    tmp_path: Path, optimized: bool, query: str
) -> None:
    # A query in double quotes was a phrase query to LanceDB, which an index without
    # token positions refuses: the search failed and the service rebuilt the whole index.
    store = MemoryStore(str(tmp_path / "index"))
    store.open(DIM)
    store.upsert(rows(NOTES))
    if optimized:
        store.optimize(timedelta(hours=1))
    expected = [] if query == '"' else ["memory/ci.md"]
    assert keyword_paths(store, query) == expected


def test_destroy_drops_the_chunks_table_and_leaves_the_rest_of_the_folder(tmp_path: Path) -> None:
    # The folder is shared with the code index: `memory reindex` deleted its tables too.
    import lancedb

    folder = tmp_path / "index"
    store = MemoryStore(str(folder))
    store.open(DIM)
    store.upsert(rows(NOTES))
    lancedb.connect(str(folder)).create_table("code_files", data=[{"path": "a.py"}])
    (folder / "code.generation").write_text("x", encoding="utf-8")
    store.destroy()
    assert lancedb.connect(str(folder)).open_table("code_files").count_rows() == 1
    assert (folder / "code.generation").exists()
    assert store.open(DIM) is True
    assert store.table.count_rows() == 0
