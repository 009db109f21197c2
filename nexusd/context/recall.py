"""Memory search through a running daemon's socket, for plans made outside the daemon."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nexusd.paths import RepoLayout


@dataclass(frozen=True)
class MemoryEvidence:
    """A memory hit a plan cites: where (`path:line`), what it says, and the queries that found it
    (`goal`, `blocker: …`, `question`)."""

    citation: str
    heading: str
    snippet: str
    score: float
    category: str
    found_for: tuple[str, ...]


class SocketRecall:
    """Search memory by asking the daemon that serves this repository (model stays warm)."""

    def __init__(self, layout: RepoLayout) -> None:
        self.layout = layout

    def search(self, query: str, k: int | None = None, mode: str | None = None) -> Any:
        """Same contract as `MemoryService.search`; raises IndexStoreError if the daemon refuses."""
        from nexusd.memory.client import ask
        from nexusd.memory.search import SearchResults

        request: dict[str, Any] = {"op": "search", "query": query, "k": k, "mode": mode}
        answer = ask(self.layout.socket_path, request)
        if answer is None:
            return SearchResults(query=query, mode="none", hits=(), note="no daemon answered")
        return SearchResults.from_dict(answer["results"])

    def search_many(self, queries: Sequence[tuple[str, int | None]]) -> list[Any]:
        """Same contract as `MemoryService.search_many`: one round trip, one embedding batch."""
        from nexusd.memory.client import ask
        from nexusd.memory.search import SearchResults

        items = [{"query": query, "k": k} for query, k in queries]
        answer = ask(self.layout.socket_path, {"op": "search_many", "queries": items})
        if answer is None:
            none = "no daemon answered"
            return [SearchResults(query=q, mode="none", hits=(), note=none) for q, _ in queries]
        return [SearchResults.from_dict(r) for r in answer["results"]]


def recall_for(layout: RepoLayout) -> SocketRecall | None:
    """A recall through the daemon's socket when one is listening, else None (cheap check)."""
    from nexusd.memory.client import listening

    return SocketRecall(layout) if listening(layout.socket_path) else None
