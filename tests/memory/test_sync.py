"""Sync against real LanceDB tables and the real model: only changed text is embedded."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.memory.embedder import Embedder
from nexusd.memory.service import MemoryService
from tests.memory.conftest import write

pytestmark = pytest.mark.model

SECTIONS = {
    "Lessons": "Pin the CPU build of torch before sentence-transformers, or pip fetches CUDA.",
    "Decisions": "We chose LanceDB because it is embedded and needs no server.",
    "Preferences": "Prefer real git repositories in tests over mocks.",
    "Incidents": "The login test flaked because workers shared one sqlite file.",
}


def memory_text(sections: dict[str, str]) -> str:
    return "# Memory\n\n" + "".join(f"## {h}\n\n{b}\n\n" for h, b in sections.items())


def indexed(service: MemoryService) -> dict[str, tuple[str, int, int]]:
    return {
        cid: (row["sha256"], row["line_start"], row["line_end"])
        for cid, row in service.syncer.indexed(None).items()
    }


def expected(service: MemoryService) -> dict[str, tuple[str, int, int]]:
    from nexusd.memory.sources import list_memory_files

    out = {}
    for rel in list_memory_files(service.layout.root, service.config):
        for c in service.syncer.read(rel).chunks:
            out[c.id] = (c.sha256, c.line_start, c.line_end)
    return out


def test_incremental_sync_embeds_exactly_the_changed_chunks(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    path = write(repo, "MEMORY.md", memory_text(SECTIONS))
    service = make_service()
    assert service.stats().chunks_indexed == 4
    before = embedder.encoded

    edited = dict(SECTIONS, Decisions="We chose LanceDB: embedded, no server, native FTS.")
    path.write_text(memory_text(edited), encoding="utf-8")
    report = service.sync_paths([path])
    assert (report.embedded, report.written, report.removed) == (1, 1, 0)
    assert embedder.encoded - before == 1

    # A paragraph inserted above shifts every line below: rows rewritten, nothing re-embedded.
    edited2 = {"Intro": "A new first section.", **edited}
    path.write_text(memory_text(edited2), encoding="utf-8")
    report = service.sync_paths([path])
    assert report.embedded == 1  # only the new section
    assert report.written == 5 and report.reused == 4
    assert indexed(service) == expected(service)

    # Unchanged file: nothing written, nothing embedded.
    count = embedder.encoded
    report = service.sync_paths([path])
    assert (report.written, report.embedded, embedder.encoded) == (0, 0, count)

    # Removing a section deletes its chunk.
    del edited2["Incidents"]
    path.write_text(memory_text(edited2), encoding="utf-8")
    report = service.sync_paths([path])
    assert report.removed == 1 and report.embedded == 0
    assert indexed(service) == expected(service)
    assert service.stats().drift == 0


def test_moved_text_reuses_its_vector_via_the_content_hash(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    write(repo, "MEMORY.md", memory_text(SECTIONS))
    service = make_service()
    before = embedder.encoded
    # Same heading path and body in another file: same sha256, new id.
    write(repo, "memory/daily/2026-01-02.md", memory_text(SECTIONS))
    report = service.sync_paths([repo / "memory/daily/2026-01-02.md"])
    assert report.written == 4 and report.embedded == 0
    assert embedder.encoded == before


def test_restart_reconciles_drift_and_embeds_only_what_changed_while_down(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    write(repo, "MEMORY.md", memory_text(SECTIONS))
    write(repo, "memory/daily/2026-01-01.md", "# Day\n\nShipped the sync.\n")
    first = make_service()
    first.stop()
    # While no daemon runs: one edit, one new file, one deleted file.
    write(repo, "MEMORY.md", memory_text(dict(SECTIONS, Lessons="Always run ruff format.")))
    write(repo, "memory/daily/2026-01-02.md", "# Day 2\n\nWrote the benchmarks.\n")
    (repo / "memory/daily/2026-01-01.md").unlink()
    before = embedder.encoded
    second = make_service()
    assert second.last_report is not None
    assert second.last_report.embedded == 2
    assert second.last_report.removed == 1
    assert embedder.encoded - before == 2
    stats = second.stats()
    assert (stats.drift, stats.chunks_indexed, stats.files_on_disk) == (0, 5, 2)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00binary", "binary"),
        (b"caf\xe9 latin-1 text", "not UTF-8"),
        (b"# big\n\n" + b"x" * 5000 + b"\n", "max_file_bytes"),
    ],
)
def test_unindexable_files_are_skipped_with_a_warning(
    repo: Path,
    make_service: Callable[..., MemoryService],
    caplog: pytest.LogCaptureFixture,
    content: bytes,
    reason: str,
) -> None:
    write(repo, "MEMORY.md", memory_text(SECTIONS))
    service = make_service({"memory": {"max_file_bytes": 4096}})
    bad = repo / "memory/daily/2026-01-03.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("# ok\n\nfirst version\n", encoding="utf-8")
    service.sync_paths([bad])
    assert service.stats().chunks_indexed == 5
    bad.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="nexusd.memory"):
        report = service.sync_paths([bad])
    assert [r for r, _ in report.skipped] == ["memory/daily/2026-01-03.md"]
    assert reason in report.skipped[0][1]
    assert any(reason in rec.getMessage() for rec in caplog.records)
    stats = service.stats()
    assert (stats.chunks_indexed, stats.files_skipped, stats.drift) == (4, 1, 0)


def test_malformed_front_matter_still_indexes_the_body(
    repo: Path, make_service: Callable[..., MemoryService], caplog: pytest.LogCaptureFixture
) -> None:
    write(repo, "MEMORY.md", "---\ncategory: [oops\n---\n# M\n\n## Lessons\n\nKeep going.\n")
    with caplog.at_level(logging.WARNING, logger="nexusd.memory"):
        service = make_service()
    assert any("front matter" in r.getMessage() for r in caplog.records)
    hits = service.search("keep going", mode="keyword").hits
    assert hits and hits[0].category == "lessons"


def test_renamed_and_vanished_files_mid_sync(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    old = write(repo, "memory/daily/2026-01-01.md", "# Day\n\nRenamed note text.\n")
    gone = write(repo, "memory/daily/2026-01-02.md", "# Day\n\nSoon deleted.\n")
    service = make_service()
    new = old.with_name("2026-01-05.md")
    old.rename(new)
    gone.unlink()
    before = embedder.encoded
    # The watcher reports all three; two no longer exist when the sync reads them.
    report = service.sync_paths([old, new, gone])
    assert report.removed == 2 and report.written == 1 and report.skipped == ()
    assert embedder.encoded == before  # same heading and text: the vector is reused
    hits = service.search("renamed note", mode="keyword").hits
    assert [h.path for h in hits] == ["memory/daily/2026-01-05.md"]
    assert hits[0].date == "2026-01-05"


@pytest.mark.parametrize("damage", ["delete", "corrupt"])
def test_a_deleted_or_corrupted_index_is_rebuilt_with_one_log_line(
    repo: Path,
    make_service: Callable[..., MemoryService],
    caplog: pytest.LogCaptureFixture,
    damage: str,
) -> None:
    import shutil

    write(repo, "MEMORY.md", memory_text(SECTIONS))
    service = make_service()
    index = Path(service.store.uri)
    with caplog.at_level(logging.WARNING, logger="nexusd.memory"):
        if damage == "delete":
            shutil.rmtree(index)
        else:
            for f in index.rglob("*"):
                if f.is_file():
                    f.write_bytes(b"garbage")
            service = make_service()  # a restart opens the corrupted files
        hits = service.search("embedded database without a server", k=2).hits
    assert hits and hits[0].heading == "Memory > Decisions"
    lines = [r.getMessage() for r in caplog.records if "rebuilding" in r.getMessage()]
    assert len(lines) == 1, lines
    assert str(index) in lines[0]
    assert service.stats().drift == 0


def test_missing_model_means_keyword_only_and_says_so(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    write(repo, "MEMORY.md", memory_text(SECTIONS))
    missing = Embedder(str(repo / "no-such-model"))
    service = make_service({"memory": {"model": str(repo / "no-such-model")}}, emb=missing)
    assert missing.status == "unavailable"
    results = service.search("sqlite file shared by workers")
    assert results.mode == "keyword"
    assert results.note is not None and "keyword search only" in results.note
    assert results.hits and results.hits[0].heading == "Memory > Incidents"
    stats = service.stats()
    assert (stats.pending_vectors, stats.model_status) == (4, "unavailable")
    service.stop()
    # The model comes back: the next start embeds the pending chunks.
    later = make_service()
    assert later.last_report is not None and later.last_report.embedded == 4
    assert later.stats().pending_vectors == 0


def test_vectors_made_another_way_are_stale_and_remade_on_the_next_start(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    write(repo, "MEMORY.md", memory_text(SECTIONS))
    service = make_service()
    # An index written by an older nexusd: same model, but long texts were cut, not windowed.
    service.store.table.update(values={"model": embedder.spec})
    stats = service.stats()
    assert (stats.stale, stats.drift, stats.pending_vectors) == (4, 4, 0)
    service.stop()
    later = make_service()
    assert later.last_report is not None and later.last_report.embedded == 4
    assert later.stats().drift == 0


def test_a_source_dropped_from_the_config_leaves_the_index(
    repo: Path, make_service: Callable[..., MemoryService]
) -> None:
    write(repo, "MEMORY.md", memory_text(SECTIONS))
    write(repo, "docs/adr/0001.md", "# ADR\n\nUse LanceDB.\n")
    with_adr = make_service({"memory": {"extra_globs": ["docs/adr/*.md"]}})
    assert with_adr.stats().chunks_indexed == 5
    with_adr.stop()
    without = make_service()
    assert without.last_report is not None and without.last_report.removed == 1
    assert without.stats().chunks_indexed == 4


def test_a_long_running_service_compacts_after_repeated_small_syncs(
    repo: Path, make_service: Callable[..., MemoryService]
) -> None:
    from nexusd.memory.service import WRITES_BEFORE_OPTIMIZE

    path = write(repo, "memory/daily/2026-03-01.md", "# 2026-03-01\n\n## 09:00\n\nstarted\n")
    service = make_service()
    service.optimize()
    fragments = []
    for i in range(WRITES_BEFORE_OPTIMIZE):
        assert not service.compact_if_due()
        # A new entry is a new chunk: an insert, which lands in a fragment of its own.
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n## 10:{i:02d}\n\nentry {i}: the queue drained\n")
        assert service.sync_paths([path]).written == 1
        fragments.append(service.store.stats()["fragments"])
        # An unchanged file writes nothing, so it does not count towards compaction.
        assert service.sync_paths([path]).written == 0

    # Each writing sync added a fragment; the sync itself never compacts.
    assert fragments == sorted(fragments) and fragments[-1] > fragments[0]
    assert service.compact_if_due()
    assert service.store.stats()["fragments"] < fragments[-1]
    assert service.writes_since_optimize == 0
    assert not service.compact_if_due()
    assert service.stats().drift == 0


def test_a_large_sync_commits_in_batches_and_reports_progress(
    repo: Path, make_service: Callable[..., MemoryService], monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexusd.memory import sync as sync_module

    service = make_service()
    monkeypatch.setattr(sync_module, "COMMIT_ROWS", 3)
    sections = "\n\n".join(f"## Topic {i}\n\nNote number {i} about the cache." for i in range(10))
    write(repo, "MEMORY.md", f"# Memory\n\n{sections}\n")
    seen: list[tuple[int, int]] = []
    report = service.syncer.sync(
        ["MEMORY.md"], progress=lambda done, total: seen.append((done, total))
    )
    assert report.written == report.embedded == 10
    # 0 first, then each committed batch, in order, ending at the total.
    assert seen == [(0, 10), (3, 10), (6, 10), (9, 10), (10, 10)]
    assert indexed(service) == expected(service)
