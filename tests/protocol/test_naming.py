"""File names: which files are requests, their responses, their timestamps."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexusd.protocol.naming import (
    NAME_MAX,
    format_timestamp,
    is_kept_response,
    is_request_file,
    is_response_file,
    kept_response_name,
    new_request_name,
    request_path_for,
    request_timestamp,
    response_path_for,
    unanswerable_name,
)

MOMENT = datetime(2025, 4, 20, 8, 11, 37, tzinfo=UTC)


@pytest.mark.parametrize(
    "name",
    [
        "2025-04-20T08_11_37_plan_request.md",
        "2025-04-20T08_11_37-plan_request.md",
        "2025-04-20T08:11:37Z_plan_request.md",
        "fix-login_plan_request.md",
        "1745136697_plan_request.md",
    ],
)
def test_request_names(name: str) -> None:
    assert is_request_file(name)
    assert is_request_file(Path("/some/dir") / name)
    assert not is_response_file(name)


@pytest.mark.parametrize(
    "name",
    [
        ".2025-04-20T08_11_37_plan_request.md",  # hidden
        ".2025-04-20T08_11_37_plan_request.md.swp",  # vim swap
        "2025-04-20T08_11_37_plan_request.md~",  # backup
        "2025-04-20T08_11_37_plan_request.md.tmp",
        ".2025-04-20T08_11_37_plan_request.md.abc123.tmp",  # nexusd.atomic temp
        "#2025-04-20T08_11_37_plan_request.md#",  # emacs autosave
        ".#2025-04-20T08_11_37_plan_request.md",  # emacs lock
        "4913",  # vim's write probe
        "_plan_request.md",  # no stem
        "plan_request.md",
        "2025-04-20T08_11_37_plan_response.md",
        "2025-04-20T08_11_37_plan_request.txt",
        "2025-04-20T08_11_37plan_request.md",  # no separator
        "notes.md",
    ],
)
def test_not_request_names(name: str) -> None:
    assert not is_request_file(name)


@pytest.mark.parametrize("sep", ["_", "-"])
def test_response_path_and_back(sep: str, tmp_path: Path) -> None:
    request = tmp_path / f"2025-04-20T08_11_37{sep}plan_request.md"
    response = response_path_for(request)
    assert response == tmp_path / f"2025-04-20T08_11_37{sep}plan_response.md"
    assert is_response_file(response)
    assert request_path_for(response) == request


def test_response_path_for_a_non_request_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a plan request name"):
        response_path_for(tmp_path / "notes.md")
    with pytest.raises(ValueError, match="not a plan response name"):
        request_path_for(tmp_path / "notes.md")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("2025-04-20T08_11_37_plan_request.md", MOMENT),
        ("2025-04-20T08_11_37", MOMENT),
        (".scratchpad_logs/2025-04-20T08_11_37_plan_response.md", MOMENT),
        ("2025-04-20T08_11_37_2_plan_request.md", MOMENT),
        ("2025-04-20T08:11:37Z_plan_request.md", MOMENT),
        ("2025-04-20T08:11:37_plan_request.md", MOMENT),
        ("2025-04-20T10:11:37+02:00_plan_request.md", MOMENT),
        ("2025-04-20T03:11:37-0500_plan_request.md", MOMENT),
        ("2025-04-20 08-11-37_plan_request.md", MOMENT),
        ("2025-04-20T08:11:37.250Z_plan_request.md", MOMENT + timedelta(milliseconds=250)),
        ("20250420T081137_plan_request.md", MOMENT),
        ("20250420T081137Z_plan_request.md", MOMENT),
        ("20250420_081137_plan_request.md", MOMENT),
        ("1745136697_plan_request.md", MOMENT),
        ("1745136697123_plan_request.md", MOMENT + timedelta(milliseconds=123)),
        ("1745136697-plan_request.md", MOMENT),
    ],
)
def test_request_timestamp_styles(name: str, expected: datetime) -> None:
    got = request_timestamp(name)
    assert got == expected
    assert got is not None and got.tzinfo is not None


@pytest.mark.parametrize(
    "name",
    [
        "fix-login_plan_request.md",
        "2025-13-20T08_11_37_plan_request.md",  # month 13
        "2025-04-20T25_11_37_plan_request.md",  # hour 25
        "2025-04-20T08:11:37+25:00_plan_request.md",  # no such zone
        "12345_plan_request.md",  # too short for epoch seconds
        "",
        # Instants a datetime cannot hold in UTC (year 0, year 10000).
        "0001-01-01T00:00:00+01:00_plan_request.md",
        "9999-12-31T23:59:59-2359_plan_response.md",
    ],
)
def test_request_timestamp_none(name: str) -> None:
    assert request_timestamp(name) is None


def test_zone_is_kept() -> None:
    got = request_timestamp("2025-04-20T10:11:37+02:00_plan_request.md")
    assert got is not None
    assert got.utcoffset() == timedelta(hours=2)


def test_new_request_name_is_canonical_and_utc() -> None:
    assert new_request_name(MOMENT) == "2025-04-20T08_11_37_plan_request.md"
    plus_two = MOMENT.astimezone(timezone(timedelta(hours=2)))
    assert new_request_name(plus_two) == "2025-04-20T08_11_37_plan_request.md"
    assert format_timestamp(datetime(2025, 1, 2, 3, 4, 5)) == "2025-01-02T03_04_05"


def test_new_request_name_avoids_taken_names(tmp_path: Path) -> None:
    first = new_request_name(MOMENT, tmp_path)
    (tmp_path / first).write_text("x", encoding="utf-8")
    second = new_request_name(MOMENT, tmp_path)
    assert second == "2025-04-20T08_11_37_2_plan_request.md"
    # An orphan response also takes its request's name.
    (tmp_path / "2025-04-20T08_11_37_2_plan_response.md").write_text("x", encoding="utf-8")
    assert new_request_name(MOMENT, tmp_path) == "2025-04-20T08_11_37_3_plan_request.md"
    assert request_timestamp(second) == MOMENT


@given(
    st.datetimes(
        min_value=datetime(1971, 1, 1),
        max_value=datetime(2999, 12, 31),
        timezones=st.just(UTC),
    )
)
def test_new_name_round_trips(moment: datetime) -> None:
    name = new_request_name(moment)
    assert is_request_file(name)
    assert request_timestamp(name) == moment.replace(microsecond=0)
    assert is_response_file(response_path_for(Path(name)))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_naming_never_crashes(stem: str) -> None:
    name = f"{stem}_plan_request.md".replace("/", "_")
    assert isinstance(is_request_file(name), bool)
    request_timestamp(name)  # returns a datetime or None, never raises


@pytest.mark.parametrize(
    "name",
    [
        "x" * 238 + "_plan_request.md",  # 254 bytes: its response has 255, the most there is
        "x" * 238 + "-plan_request.md",
        "é" * 119 + "_plan_request.md",  # 254 bytes in 135 characters
        "2025-04-20T08_11_37 日本 ünï_plan_request.md",
    ],
)
def test_a_name_whose_response_fits_can_be_answered(name: str) -> None:
    assert len(response_path_for(Path(name)).name.encode()) <= NAME_MAX
    assert unanswerable_name(Path("/repo/.scratchpad_logs") / name) is None


@pytest.mark.parametrize(
    ("name", "longest"),
    [
        ("x" * 239 + "_plan_request.md", 254),
        ("x" * 239 + "-plan_request.md", 254),
        ("é" * 119 + "x_plan_request.md", 254),
    ],
)
def test_a_name_whose_response_would_be_too_long_says_how_long_it_may_be(
    name: str, longest: int
) -> None:
    error = unanswerable_name(Path("/repo/.scratchpad_logs") / name)
    assert error is not None
    assert "too long a name" in error.message and "would be 256 bytes" in error.message
    assert error.hint is not None and f"at most {longest} bytes" in error.hint


def test_a_name_that_is_not_utf8_cannot_be_answered() -> None:
    name = Path(os.fsdecode(b"/repo/caf\xe9_plan_request.md"))
    error = unanswerable_name(name)
    assert error is not None
    assert error.message.startswith("caf\\xe9_plan_request.md is not a UTF-8 file name")
    assert error.hint is not None and "rename" in error.hint


def test_a_name_that_cannot_be_answered_is_said_without_its_control_characters() -> None:
    found = unanswerable_name(Path("a\x1b[31m" + "x" * 260 + "_plan_request.md"))
    assert found is not None and found.message.startswith("a\\x1b[31mxxx")
    found = unanswerable_name(Path("a\udcff\n_plan_request.md"))
    assert found is not None and found.message.startswith("a\\xff\\n_plan_request.md is not")


@pytest.mark.parametrize("sep", ["_", "-"])
def test_a_kept_response_is_named_beside_its_response_and_is_neither_kind(sep: str) -> None:
    response = Path(f".scratchpad_logs/2025-05-08T14_02_11{sep}plan_response.md")
    name = kept_response_name(response, MOMENT)
    assert name == f"2025-05-08T14_02_11{sep}plan_response.edited-2025-04-20T08_11_37.md"
    assert kept_response_name(response, MOMENT, 2).endswith(".edited-2025-04-20T08_11_37-2.md")
    for kept in (name, kept_response_name(response, MOMENT, 2)):
        assert not is_request_file(kept) and not is_response_file(kept)
        assert is_kept_response(kept)  # a plan file all the same: the plan role opens it
        assert request_timestamp(kept) == datetime(2025, 5, 8, 14, 2, 11, tzinfo=UTC)
    with pytest.raises(ValueError, match="not a plan response name"):
        kept_response_name(Path("notes.md"), MOMENT)
    assert not is_kept_response(response.name)
    assert not is_kept_response(f"x{sep}plan_request.md") and not is_kept_response("edited-1.md")


@pytest.mark.parametrize("stem", ["y" * 237, "é" * 118, "日" * 79])
def test_the_kept_name_of_the_longest_response_fits(stem: str) -> None:
    response = Path(f"{stem}_plan_response.md")
    assert len(os.fsencode(response.name)) <= NAME_MAX
    name = kept_response_name(response, MOMENT, 12)
    assert len(os.fsencode(name)) <= NAME_MAX
    assert name.endswith("~_plan_response.edited-2025-04-20T08_11_37-12.md")
    assert name.startswith(stem[:20])
