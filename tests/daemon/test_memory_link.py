"""The daemon's memory link: a real service, watcher and sync thread on a real repository."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from nexusd.config import load_config
from nexusd.daemon import memory_link
from nexusd.daemon.memory_link import FLUSH_SECONDS, MemoryLink
from nexusd.paths import find_repo
from tests.daemon.helpers import wait_until

pytestmark = pytest.mark.model


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
