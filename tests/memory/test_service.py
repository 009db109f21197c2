"""The memory service's lifecycle: what a search right after start-up sees."""

from __future__ import annotations

from pathlib import Path

import pytest

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
