from __future__ import annotations

import time
from pathlib import Path

import pytest

from nexusd.context.catalog import (
    Practice,
    load_catalog,
    match_practices,
    matched_keywords,
    packaged_catalog,
)
from nexusd.errors import ConfigError


def test_packaged_catalog_is_curated() -> None:
    catalog = packaged_catalog()
    assert 20 <= len(catalog) <= 40
    ids = [p.id for p in catalog]
    assert len(ids) == len(set(ids))
    assert all(p.title and p.practice for p in catalog)
    assert any(p.generic for p in catalog)
    assert all(p.keywords for p in catalog if not p.generic)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Order lost on the overflow shelf under contention; the lock races", "concurrency-locks"),
        ("Invoice totals are off by one cent after rounding", "money-rounding"),
        ("pytest-timeout kills the test after 60 s, it hangs", "timeouts"),
        ("The login test is flaky, fails 1 in 20 runs", "flaky-tests"),
        ("Add a column with an alembic migration", "migrations"),
        ("Reduce p99 latency of the search endpoint", "performance"),
        ("Sanitize untrusted input to stop SQL injection", "security-input"),
    ],
)
def test_goal_keywords_choose_the_matching_practice(text: str, first: str) -> None:
    matches = match_practices(packaged_catalog(), text)
    assert matches[0].practice.id == first
    assert matches[0].matched


def test_short_keywords_match_whole_words_only() -> None:
    matches = match_practices(packaged_catalog(), "a circle of uint values", minimum=0)
    assert all(m.practice.id not in ("ci", "ui-frontend") for m in matches)


def test_env_variables_still_choose_the_configuration_practice() -> None:
    said = "Allow overriding the API base URL with env variables"
    found = {m.practice.id for m in match_practices(packaged_catalog(), said, minimum=0)}
    assert "configuration" in found


def test_a_phrase_is_not_matched_inside_a_longer_word() -> None:
    # "1 in" (one run in twenty) is no flaky test in "returns 1 instead of 0".
    said = "count() returns 1 instead of 0 for an empty basket"
    assert "flaky-tests" not in {
        m.practice.id for m in match_practices(packaged_catalog(), said, minimum=0)
    }


@pytest.mark.parametrize(
    ("keyword", "text", "found"),
    [
        # A short word is a whole word wherever it stands in a phrase.
        ("1 in", "fails 1 in 20 runs", True),
        ("1 in", "returns 1 instead of 0", False),
        ("broke in", "the export broke in 2.1", True),
        ("broke in", "someone broke into the build", False),
        ("a cent", "off by a cent", True),
        ("a cent", "in a central place", True),  # `cent` is long enough to be a stem
        # Stems still match the words they start; a phrase's inner words stay whole.
        ("nondetermin", "the order is nondeterministic", True),
        ("random failure", "random failures on ci", True),
        ("random failure", "randomly failures", False),
        # A phrase's last short word takes a plural's `s`, no more of a longer word.
        ("duplicate job", "the queue runs duplicate jobs after a restart", True),
        ("env var", "read the token from env vars", True),
        ("startup time", "startup times went up", True),
        ("duplicate job", "a duplicate jobserver", False),
        # A keyword ending in punctuation needs no word after it.
        ("../", "a path with ../ in it", True),
        ("../", "open ../etc/passwd", True),
    ],
)
def test_keywords_match_words_and_stems_not_pieces_of_words(
    keyword: str, text: str, found: bool
) -> None:
    practice = Practice(id="x", title="X", keywords=(keyword,), practice="p")
    assert bool(matched_keywords(practice, text)) is found


@pytest.mark.parametrize(
    ("text", "bisect"),
    [
        ("unstacking is broken for single-dim variables", False),
        ("the export broke after the 2.1 upgrade", True),
        ("this used to work in 1.4", True),
    ],
)
def test_a_broken_thing_is_no_regression_until_it_worked_before(text: str, bisect: bool) -> None:
    ids = {m.practice.id for m in match_practices(packaged_catalog(), text, minimum=0)}
    assert ("bisect" in ids) is bisect


@pytest.mark.parametrize(
    ("text", "not_chosen"),
    [
        # Words of the program, not of the problem: a pasted package listing, names in code.
        (
            "The plot is blank.\n\n```\n$ pip list\nlocket 1.0.0\natomicwrites 1.4.0\n```\n",
            "concurrency-locks",
        ),
        ("qs.annotate(total_count=Count('id')) drops rows; see `self._lock` too", None),
        ("from astropy.table import QTable fails to print", "migrations"),
        ("Bad centering for Sum pretty print", "money-rounding"),
        # A program's own nouns, not the practice's: a table of data, a renamed model field,
        # a traceback (an error's, not a logging concern), duplicated results, a directory
        # layout.
        ("Wrong column widths when the table is printed", "migrations"),
        ("RenameModel with db_table should be a noop", "files-atomic"),
        ("The traceback shows the wrong line", "logging"),
        ("union() returns duplicate rows", "queues"),
        ("Man pages ignore the section directory layout", "ui-frontend"),
    ],
)
def test_practices_are_chosen_by_the_prose_not_the_code_it_quotes(
    text: str, not_chosen: str | None
) -> None:
    chosen = {m.practice.id for m in match_practices(packaged_catalog(), text, minimum=0)}
    assert not_chosen not in chosen
    assert not chosen & {"money-rounding", "concurrency-locks", "migrations", "files-atomic"}


def test_the_prose_beside_a_code_block_still_chooses() -> None:
    said = "Totals are off by one cent after rounding, says the lock test.\n\n```\nx = 1\n```"
    ids = [m.practice.id for m in match_practices(packaged_catalog(), said, minimum=0)]
    assert "money-rounding" in ids and "concurrency-locks" in ids


def test_generic_practices_fill_when_nothing_matches() -> None:
    matches = match_practices(packaged_catalog(), "zzz qqq", minimum=2)
    assert len(matches) == 2
    assert all(m.practice.generic and m.matched == () for m in matches)


def test_limit() -> None:
    text = "race lock timeout flaky rounding migration latency injection cache queue"
    assert len(match_practices(packaged_catalog(), text, limit=3)) == 3


def test_custom_catalog_from_config(repo: Path) -> None:
    (repo / "practices.yaml").write_text(
        "entries:\n  - id: mine\n    title: Our rule\n    keywords: [widget]\n"
        "    practice: Always frobnicate widgets.\n"
    )
    catalog = load_catalog(repo, "practices.yaml")
    assert [p.id for p in catalog] == ["mine"]
    assert match_practices(catalog, "fix the widget", minimum=0)[0].practice.title == "Our rule"
    # An edit is seen on the next load (the cache is keyed on mtime and size).
    (repo / "practices.yaml").write_text(
        "entries:\n  - id: other\n    title: Another rule\n    keywords: [gadget]\n"
        "    practice: Never frobnicate gadgets twice.\n"
    )
    assert [p.id for p in load_catalog(repo, "practices.yaml")] == ["other"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("entries: [", "not valid YAML"),
        ("entries: []\n", "non-empty `entries:`"),
        ("entries:\n  - id: x\n    title: t\n", "`practice` is missing"),
        ("entries:\n  - id: x\n    title: t\n    practice: p\n    keywords: word\n", "keywords"),
        ("entries:\n  - just a string\n", "must be a mapping"),
        (
            "entries:\n  - id: x\n    title: t\n    practice: p\n    keywords: [error]\n"
            "    diagnostic_when: [crash]\n",
            "`diagnostic_when` must list some of the entry's keywords",
        ),
    ],
)
def test_bad_custom_catalog_is_a_config_error(
    repo: Path, content: str | None, message: str
) -> None:
    if content is not None:
        (repo / "bad.yaml").write_text(content)
    with pytest.raises(ConfigError, match=r"bad\.yaml") as info:
        load_catalog(repo, "bad.yaml")
    assert message in str(info.value)
    assert info.value.hint


def test_a_long_word_in_the_prose_is_matched_in_linear_time() -> None:
    # A pasted hash or base64 blob: names from code were looked for at each of its
    # characters (about 4 s for 20,000 characters, per blocker and for the goal).
    said = "The upload of this payload fails: " + "Zm9vYmFy" * 2_500
    started = time.perf_counter()
    match_practices(packaged_catalog(), said, minimum=0)
    assert time.perf_counter() - started < 1.0
