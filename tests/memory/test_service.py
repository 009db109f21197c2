"""The memory service's lifecycle: what a search right after start-up sees."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from daemon.helpers import nexusd_env

from nexusd.config import config_from_mapping
from nexusd.memory.embedder import Embedder
from nexusd.memory.service import MemoryService
from nexusd.paths import find_repo
from tests.memory.conftest import write

pytestmark = pytest.mark.model

LESSONS = "".join(
    f"## Lesson {i}\n\nThe shelf lock of courier{i} must be taken before the oven lock.\n\n"
    for i in range(40)
)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_search_as_the_service_starts_waits_for_the_start_up_reconcile(
    repo: Path, embedder: Embedder, mode: str
) -> None:
    write(repo, "MEMORY.md", f"# Memory\n\n{LESSONS}")
    service = MemoryService(find_repo(repo), config_from_mapping({}), embedder=embedder)
    service.start()  # reconciles in the background, as in the daemon
    try:
        results = service.search("courier7 shelf lock order", k=3, mode=mode)
        assert [h.heading for h in results.hits][:1] == ["Memory > Lesson 7"]
    finally:
        service.stop()
    assert service.stats().drift == 0


def test_a_quoted_query_after_a_reindex_finds_the_words_and_keeps_the_index(
    repo: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    import lancedb

    write(repo, "MEMORY.md", f"# Memory\n\n{LESSONS}")
    service = MemoryService(find_repo(repo), config_from_mapping({}), embedder=embedder)
    service.start(background=False)
    try:
        service.reindex()  # folds every row into the full-text index
        folder = Path(service.store.uri)
        lancedb.connect(str(folder)).create_table("code_files", data=[{"path": "a.py"}])
        with caplog.at_level(logging.WARNING, logger="nexusd.memory"):
            hits = service.search('"courier7 shelf"', k=1, mode="keyword").hits
        assert [h.heading for h in hits] == ["Memory > Lesson 7"]
        assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]
        assert service.stats().pending_vectors == 0  # no vector was thrown away
        assert lancedb.connect(str(folder)).open_table("code_files").count_rows() == 1
    finally:
        service.stop()


SYNCER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from nexusd.config import load_config
    from nexusd.memory import sync
    from nexusd.memory.service import MemoryService
    from nexusd.paths import find_repo

    sync.COMMIT_ROWS = 64  # many commits, so the writers interleave
    layout = find_repo(Path(sys.argv[1]))
    service = MemoryService(layout, load_config(layout.root))
    print("ready", flush=True)
    sys.stdin.readline()
    service.start(background=False, load_model=False)
    print("done", flush=True)
    """
)


def test_processes_syncing_a_new_index_at_once_store_each_chunk_once(
    repo: Path, embedder: Embedder
) -> None:
    # Three `nexusd memory search` without a daemon on a fresh index stored 5,048 rows
    # for 3,000 chunks; every hit then came twice, and no later sync removed the copies.
    sections = "".join(f"## Note {i}\n\nThe widget {i} needs oiling.\n\n" for i in range(600))
    write(repo, "MEMORY.md", f"# Memory\n\n{sections}")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SYNCER, str(repo)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=nexusd_env(),
        )
        for _ in range(3)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:  # released together
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    service = MemoryService(find_repo(repo), config_from_mapping({}), embedder=embedder)
    service.open()
    ids = service.store.table.search().select(["id"]).limit(None).to_arrow().column("id")
    assert len(ids) == len(set(ids.to_pylist())) == 600
    hits = service.search("widget 17 oiling", k=2, mode="keyword").hits
    assert [h.heading for h in hits][:1] == ["Memory > Note 17"]
    assert hits[0].id != hits[1].id


def test_copies_of_a_chunk_in_the_index_are_drift_and_the_next_sync_removes_them(
    repo: Path, embedder: Embedder
) -> None:
    write(repo, "MEMORY.md", f"# Memory\n\n{LESSONS}")
    service = MemoryService(find_repo(repo), config_from_mapping({}), embedder=embedder)
    service.start(background=False)
    try:
        table = service.store.table
        copies = table.search().where("heading = 'Memory > Lesson 3'").limit(None).to_arrow()
        table.add(
            copies.drop_columns(["_distance"]) if "_distance" in copies.column_names else copies
        )
        stats = service.stats()
        assert (stats.chunks_indexed, stats.duplicates, stats.drift) == (40, 1, 1)
        report = service.reconcile()
        assert report.removed == 1 and report.embedded == 0  # its stored vector is reused
        assert table.count_rows() == 40 and service.stats().drift == 0
        hits = service.search("courier3 shelf lock", k=2, mode="keyword").hits
        assert hits[0].heading == "Memory > Lesson 3" and hits[1].heading != hits[0].heading
    finally:
        service.stop()
