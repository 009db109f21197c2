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
