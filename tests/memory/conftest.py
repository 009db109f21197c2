"""Memory fixtures: the real packaged model loaded once per session, services on real repos."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nexusd.config import config_from_mapping
from nexusd.memory.embedder import Embedder, shared_embedder
from nexusd.memory.service import MemoryService
from nexusd.paths import find_repo

MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="session", autouse=True)
def _lancedb_loop() -> None:
    """LanceDB starts one background event-loop thread per process on import; start it
    before any test so the leak guard counts it as pre-existing."""
    import lancedb  # noqa: F401


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The process-wide packaged model, loaded synchronously (no loader thread)."""
    emb = shared_embedder(MODEL)
    assert emb.load(), emb.error
    return emb


@pytest.fixture
def make_service(repo: Path, embedder: Embedder) -> Iterator[Callable[..., MemoryService]]:
    """Factory: a started MemoryService on `repo` (stopped at teardown)."""
    started: list[MemoryService] = []

    def make(config: dict[str, Any] | None = None, *, emb: Embedder | None = None) -> MemoryService:
        layout = find_repo(repo)
        service = MemoryService(layout, config_from_mapping(config or {}), embedder=emb or embedder)
        service.start(background=False)
        started.append(service)
        return service

    yield make
    for service in started:
        service.stop()


def write(root: Path, rel: str, text: str) -> Path:
    """Write a file under root (parents created)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
