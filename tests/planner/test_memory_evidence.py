"""Memory evidence cites the user's notes that inform the goal, never nexusd's own daily lines."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from nexusd.config import config_from_mapping
from nexusd.context.relevant_code import code_phase
from nexusd.memory.daily import append_daily_entry
from nexusd.memory.embedder import shared_embedder
from nexusd.memory.service import MemoryService
from nexusd.memory.writes import add_memory
from nexusd.paths import find_repo
from nexusd.planner.grounding import Services, memory_phase
from nexusd.planner.pipeline import answer_request
from tests.plan_helpers import kitchen_repo, request

GOAL = "Fix the lost order on the overflow shelf under contention"


@pytest.fixture(scope="module", autouse=True)
def _lancedb_loop() -> None:
    """LanceDB starts its event-loop thread on import: before the leak guard counts."""
    import lancedb  # noqa: F401


@pytest.fixture
def service(repo: Path) -> Iterator[MemoryService]:
    """A real memory index over a repository whose daily note holds nexusd's own entries."""
    layout = find_repo(repo)
    when = datetime(2026, 1, 2, 10, 0)
    # What the daemon writes for answered requests and commits: they echo the goal back.
    for cycle in (1, 2, 3):
        append_daily_entry(
            layout,
            when=when.replace(minute=cycle),
            cycle=cycle,
            goal=f"Plan for cycle {cycle}: {GOAL}",
            status="ok",
            response_path=f".scratchpad_logs/2026-01-02T10_0{cycle}_00_plan_response.md",
        )
    add_memory(
        layout,
        "commit `abc`; checks: overflow shelf: failed",
        category="commit",
        daily=True,
        when=when.replace(minute=9),
    )
    # What a person wrote: a lesson and a daily note of their own.
    add_memory(
        layout,
        "The overflow shelf loses an order when two couriers race for it; "
        "take the shelf lock before reading the count.",
        category="Lessons",
        when=when,
    )
    add_memory(
        layout,
        "Measured: the overflow shelf race shows 1 run in 20 under contention.",
        category="notes",
        daily=True,
        when=when.replace(minute=30),
    )
    emb = shared_embedder("all-MiniLM-L6-v2")
    assert emb.load(), emb.error
    memory = MemoryService(layout, config_from_mapping({}), embedder=emb)
    memory.start(background=False)
    yield memory
    memory.stop()


def test_own_daily_entries_are_not_cited_the_users_notes_are(service: MemoryService) -> None:
    hits, _ = memory_phase(service, request(goal=GOAL, blockers=()))
    cited = {h.citation.split(":")[0] + " " + h.heading for h in hits}
    assert any(c.startswith("MEMORY.md ") for c in cited)
    assert any("notes" in c for c in cited if c.startswith("memory/daily/"))
    for hit in hits:
        heading = hit.heading
        assert " request: " not in heading and " cycle " not in heading, hit
        assert not heading.endswith(" commit"), hit


def test_a_file_that_memory_names_moves_up_with_the_reason(repo: Path) -> None:
    kitchen_repo(repo)
    layout = find_repo(repo)
    goal = "Find and fix the lost order on the overflow shelf under contention"
    offline = code_phase(layout, config_from_mapping({}), request(goal=goal), None)
    ranked = [h.path for h in offline.hits]
    assert ranked[0] == "kitchen/shelves.py" and ranked.index("kitchen/courier.py") > 1
    add_memory(
        layout,
        "Orders lost on the overflow shelf were never the shelf: the courier drops them "
        "in `kitchen/courier.py`.",
        category="Lessons",
    )
    emb = shared_embedder("all-MiniLM-L6-v2")
    assert emb.load(), emb.error
    memory = MemoryService(layout, config_from_mapping({}), embedder=emb)
    memory.start(background=False)
    try:
        folder = repo / ".scratchpad_logs"
        folder.mkdir(exist_ok=True)
        path = folder / "2026-01-02T10_00_00_plan_request.md"
        path.write_text(f"# Goal\n\n{goal}\n", encoding="utf-8")
        outcome = answer_request(path, layout, config_from_mapping({}), services=Services(memory))
    finally:
        memory.stop()
    assert outcome.status == "ok", outcome.message
    text = outcome.response_path.read_text(encoding="utf-8")
    code = text[text.index("## Relevant Code") :]
    # Above the files that only share words with the request, below the one it names.
    assert "\n2. `kitchen/courier.py:1` — named in memory at `MEMORY.md:" in code
