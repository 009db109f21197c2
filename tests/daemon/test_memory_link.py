"""The daemon's memory link: a real service, watcher and sync thread on a real repository."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

from nexusd.config import load_config
from nexusd.daemon import memory_link
from nexusd.daemon.memory_link import FLUSH_SECONDS, MemoryLink, content_hash
from nexusd.paths import find_repo
from tests.daemon.helpers import wait_until


@pytest.mark.model
def test_a_memory_sync_waits_until_the_request_in_hand_is_answered(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The link pins torch to one thread through the environment: keep that out of the
    # processes later tests start.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # Only the end of the answer may release the sync here, never the safety deadline.
    monkeypatch.setattr(memory_link, "MAX_DEFER_SECONDS", 600.0)
    link = MemoryLink(find_repo(repo), load_config(repo), logging.getLogger("test"))
    link.start()
    try:
        assert link.service.wait_ready(120), link.service.embedder.error

        def found() -> int:
            return len(link.service.search("zebrafish", mode="keyword").hits)

        with link.answering():
            (repo / "MEMORY.md").write_text(
                "# Memory\n\n## Lessons\n\nThe zebrafish fixture needs a warm cache.\n",
                encoding="utf-8",
            )
            link.touch(repo / "MEMORY.md")
            time.sleep(FLUSH_SECONDS * 4)
            assert found() == 0
        wait_until(found, what="the deferred sync after the answer")
    finally:
        link.stop()


class _Syncs(logging.Handler):
    """Collects the paths of every `memory synced` log line."""

    def __init__(self) -> None:
        super().__init__()
        self.synced: list[list[str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == "memory synced":
            self.synced.append(list(getattr(record, "nexus_fields", {}).get("paths", [])))


@pytest.mark.model
def test_only_real_content_changes_sync_never_reads_or_same_bytes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    daily = repo / "memory" / "daily" / "2026-01-01.md"
    daily.parent.mkdir(parents=True, exist_ok=True)
    daily.write_text("# 2026-01-01\n\n- first note\n", encoding="utf-8")
    memory_file = repo / "MEMORY.md"
    memory_file.write_text("# Memory\n\n## Lessons\n\nKeep the cache warm.\n", encoding="utf-8")
    logger = logging.getLogger("test.memory-idle")
    logger.setLevel(logging.INFO)
    syncs = _Syncs()
    logger.addHandler(syncs)
    link = MemoryLink(find_repo(repo), load_config(repo), logger)
    link.start()
    try:
        assert link.service.wait_ready(120), link.service.embedder.error
        # A real change syncs; the sync's own reads of the file must not sync it again.
        daily.write_text("# 2026-01-01\n\n- first note\n- second note\n", encoding="utf-8")
        wait_until(lambda: syncs.synced, what="the daily note's sync")
        # Reads (open + close-without-write) and a re-save of the very same bytes.
        memory_file.read_text(encoding="utf-8")
        memory_file.write_bytes(memory_file.read_bytes())
        # Then a real change elsewhere: the next sync is about that file alone.
        (repo / "memory" / "daily" / "2026-01-02.md").write_text(
            "# 2026-01-02\n\n- a new day\n", encoding="utf-8"
        )
        wait_until(lambda: len(syncs.synced) >= 2, what="the new note's sync")

        assert syncs.synced[:2] == [["memory/daily/2026-01-01.md"], ["memory/daily/2026-01-02.md"]]
    finally:
        link.stop()
        logger.removeHandler(syncs)


def _changed_in_thread(link: MemoryLink, path: Path, fifo: Path) -> set[Path]:
    """The sync thread's change check on `path`; an open blocked on `fifo` is released."""
    result: list[set[Path]] = []
    thread = threading.Thread(target=lambda: result.append(link._changed({path})), daemon=True)
    thread.start()
    thread.join(60)
    blocked = thread.is_alive()
    if blocked:  # a read-write open never blocks and ends the reader's wait
        os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
        thread.join(60)
    assert not blocked, "hashing a memory file blocked on a FIFO"
    return result[0]


def test_a_daily_note_that_is_a_fifo_or_a_link_to_one_is_not_waited_on(repo: Path) -> None:
    daily = repo / "memory" / "daily"
    daily.mkdir(parents=True)
    fifo = repo / "pipe"
    os.mkfifo(fifo)
    (daily / "2025-01-05.md").symlink_to(fifo)
    os.mkfifo(daily / "2025-01-06.md")
    link = MemoryLink(find_repo(repo), load_config(repo), logging.getLogger("test"))

    # New paths count as changed (the sync then finds nothing to index in them).
    assert _changed_in_thread(link, daily / "2025-01-05.md", fifo) == {daily / "2025-01-05.md"}
    fifo_note = daily / "2025-01-06.md"
    assert _changed_in_thread(link, fifo_note, fifo_note) == {fifo_note}
    assert link._hashes == {daily / "2025-01-05.md": None, fifo_note: None}


def test_memory_files_outside_the_repository_or_over_the_cap_are_not_read(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n", encoding="utf-8")
    (repo / "MEMORY.md").symlink_to(outside)
    (repo / "zero.md").symlink_to("/dev/zero")
    big = repo / "big.md"
    big.write_bytes(b"x" * 2048)
    (repo / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (repo / "linked.md").symlink_to(repo / "notes.md")

    assert content_hash(repo, repo / "MEMORY.md", 1 << 20) is None
    assert content_hash(repo, repo / "zero.md", 1 << 20) is None
    assert content_hash(repo, big, 1024) is None
    assert content_hash(repo, big, 4096) is not None
    # A link inside the repository is what the sync indexes: it is hashed like its target.
    assert content_hash(repo, repo / "linked.md", 1024) == content_hash(
        repo, repo / "notes.md", 1024
    )
