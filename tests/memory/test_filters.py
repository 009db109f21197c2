"""Search filters: the LanceDB prefilter and its in-memory twin agree, nulls included."""

from __future__ import annotations

import pytest

from nexusd.errors import NexusError
from nexusd.memory.filters import Filters, like_regex


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("memory/%.md", "memory/daily/2026-01-01.md", True),  # % crosses slashes, as in SQL
        ("memory/_.md", "memory/a.md", True),
        ("memory/_.md", "memory/ab.md", False),
        ("Memory/%", "memory/a.md", False),  # LIKE is case-sensitive
        ("a.b%", "axb.md", False),  # a dot is literal
        ("100\\%%", "100%.md", True),
        ("100\\%%", "1000.md", False),
        ("memory/%", "memory/line\nbreak.md", True),
    ],
)
def test_like_regex_follows_sql_like(pattern: str, path: str, matches: bool) -> None:
    assert bool(like_regex(pattern).match(path)) is matches


def test_predicates_say_what_the_where_clause_says() -> None:
    role = Filters(categories=("Lessons ", "notes"), hidden_categories=("security",))
    assert role.where() == "category IN ('lessons', 'notes') AND category NOT IN ('security')"
    assert [role.category_passes(c) for c in ("lessons", "notes", "security", "daily")] == [
        True,
        True,
        False,
        False,
    ]
    # SQL: a null category fails `=`, `IN` and `NOT IN` alike.
    assert not role.category_passes(None)
    assert not Filters(hidden_categories=("security",)).category_passes(None)
    assert Filters().category_passes(None) and Filters().date_passes(None)
    # An empty role list matches only the empty category, as `IN ('')` does.
    assert Filters(categories=()).category_passes("")
    assert not Filters(categories=()).category_passes("lessons")


def test_date_and_path_predicates() -> None:
    window = Filters(since="2026-01-02", until="2026-01-31T10:00")
    assert "date >= '2026-01-02' AND date <= '2026-01-31'" in (window.where() or "")
    passes = [window.date_passes(d) for d in ("2026-01-01", "2026-01-02", "2026-01-31", None)]
    assert passes == [False, True, True, False]
    glob = Filters(path_glob="memory/**/2026-*.md")
    assert glob.path_passes("memory/daily/2026-01-01.md")
    assert not glob.path_passes("MEMORY.md") and not glob.path_passes(None)
    with pytest.raises(NexusError, match="not a date"):
        Filters(since="last week").date_passes("2026-01-01")
