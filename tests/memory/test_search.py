"""Search on a small set of real notes: by meaning, by exact words, with filters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.memory.service import MemoryService
from tests.memory.conftest import write

pytestmark = pytest.mark.model

MEMORY = """\
# Memory

## Lessons

- The login test flaked because two pytest workers shared one sqlite database file.

### Packaging

- Install the CPU build of torch first, otherwise pip downloads several GB of CUDA wheels.

## Decisions

- We store embeddings in LanceDB because it runs embedded, without a server process.

## Preferences

- Error messages must tell the user what to do next (ERR_HINT_42 convention).
"""

DAY1 = "# 2025-06-01\n\n## 09:00 cycle 1: done\n\n- goal: speed up CI by caching pip downloads\n"
DAY2 = "# 2026-01-15\n\n## 10:00 cycle 7: done\n\n- goal: make the daemon restart cleanly\n"


@pytest.fixture
def service(repo: Path, make_service: Callable[..., MemoryService]) -> MemoryService:
    write(repo, "MEMORY.md", MEMORY)
    write(repo, "memory/daily/2025-06-01.md", DAY1)
    write(repo, "memory/daily/2026-01-15.md", DAY2)
    write(repo, "docs/adr/0001.md", "# ADR 1\n\nWe write every file atomically via rename.\n")
    return make_service({"memory": {"extra_globs": ["docs/adr/*.md"]}})


@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("why did the authentication check fail intermittently", "Memory > Lessons"),
        ("avoid downloading GPU libraries when setting up", "Memory > Lessons > Packaging"),
        ("which storage engine did we choose for vectors", "Memory > Decisions"),
        ("quicker CI runs thanks to a cache", "2025-06-01 > 09:00 cycle 1: done"),
    ],
)
def test_paraphrases_are_found_by_meaning(service: MemoryService, query: str, heading: str) -> None:
    for mode in ("hybrid", "vector"):
        results = service.search(query, k=3, mode=mode)
        assert results.hits[0].heading == heading, (mode, results.hits)
        assert "vector" in results.hits[0].retrievers


def test_exact_rare_words_are_found_by_keyword(service: MemoryService) -> None:
    results = service.search("ERR_HINT_42", k=3, mode="keyword")
    assert results.hits[0].heading == "Memory > Preferences"
    hybrid = service.search("ERR_HINT_42", k=3)
    assert hybrid.hits[0].heading == "Memory > Preferences"
    assert "keyword" in hybrid.hits[0].retrievers


def test_hits_cite_path_and_lines(service: MemoryService) -> None:
    hit = service.search("sqlite database file shared", k=1).hits[0]
    lines = MEMORY.splitlines()
    assert hit.citation == f"MEMORY.md:{hit.line_start}"
    assert "sqlite" in lines[hit.line_start - 1]
    assert hit.line_end >= hit.line_start
    assert "sqlite" in hit.snippet and hit.category == "lessons"


@pytest.mark.parametrize(
    ("filters", "paths"),
    [
        ({"category": "Decisions"}, {"MEMORY.md"}),
        ({"category": "daily"}, {"memory/daily/2025-06-01.md", "memory/daily/2026-01-15.md"}),
        ({"path_glob": "docs/**"}, {"docs/adr/0001.md"}),
        ({"path_glob": "memory/daily/*.md", "since": "2026-01-01"}, {"memory/daily/2026-01-15.md"}),
        ({"path_glob": "memory/daily/*.md", "until": "2025-12-31"}, {"memory/daily/2025-06-01.md"}),
    ],
)
def test_filters(service: MemoryService, filters: dict[str, str], paths: set[str]) -> None:
    for mode in ("hybrid", "vector", "keyword"):
        query = "goal embeddings file" if mode == "keyword" else "what happened"
        hits = service.search(query, k=10, mode=mode, **filters).hits  # type: ignore[arg-type]
        assert hits, (mode, filters)
        assert {h.path for h in hits} <= paths, (mode, filters)


def test_recency_boost_prefers_recent_notes(
    repo: Path, make_service: Callable[..., MemoryService]
) -> None:
    from datetime import date, timedelta

    note = "- goal: tune the retrieval benchmark\n"
    new_day = date.today().isoformat()
    old_day = (date.today() - timedelta(days=3 * 365)).isoformat()
    write(repo, f"memory/daily/{old_day}.md", f"# day\n\n## entry\n\n{note}")
    write(repo, f"memory/daily/{new_day}.md", f"# day\n\n## entry\n\n{note}")
    plain = make_service()
    hits = plain.search("retrieval benchmark", k=2).hits
    assert hits[0].score == hits[1].score  # same text: a tie without the boost
    boosted = make_service({"memory": {"search": {"recency_half_life_days": 30}}})
    hits = boosted.search("retrieval benchmark", k=2).hits
    assert hits[0].path == f"memory/daily/{new_day}.md"
    assert hits[0].score > hits[1].score


def test_empty_query_and_bad_date(service: MemoryService) -> None:
    from nexusd.errors import NexusError

    assert service.search("   ", mode="hybrid").hits == ()
    with pytest.raises(NexusError, match="YYYY-MM-DD"):
        service.search("x", since="last tuesday")


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_batch_of_searches_ranks_each_query_as_alone(service: MemoryService, mode: str) -> None:
    queries = [
        ("why did the authentication check fail intermittently", 3),
        ("", 2),
        ("LanceDB embedded", 1),
        ("quicker CI runs thanks to a cache", 5),
    ]
    together = service.search_many(queries, mode)
    alone = [service.search(query, k, mode) for query, k in queries]
    assert [r.query for r in together] == [q for q, _ in queries]
    assert [r.hits for r in together] == [r.hits for r in alone]
    assert together[1].hits == () and len(together[2].hits) == 1
    assert all(r.mode == mode for r in together)


def test_a_unique_word_ranks_its_note_first_in_hybrid_mode(
    repo: Path, make_service: Callable[..., MemoryService]
) -> None:
    notes = "\n\n".join(
        f"## Entry {i}\n\nNote edited zephyrcode{i}x{code}: cache token rollback lock commit."
        for i, code in enumerate((913734, 204518, 936075))
    )
    write(repo, "MEMORY.md", f"# Memory\n\n{notes}\n")
    service = make_service()
    for i, code in enumerate((913734, 204518, 936075)):
        hits = service.search(f"zephyrcode{i}x{code}", k=3).hits
        assert hits[0].heading == f"Memory > Entry {i}", hits
        assert hits[0].retrievers == ("keyword", "vector")
