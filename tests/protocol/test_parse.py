"""parse_request: form detection, hashing, line endings, encodings and bad input."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nexusd.errors import ProtocolError
from nexusd.protocol.parse import detect_form, parse_request

FIXTURES = (
    "oppie/2025-04-20T08_11_37_plan_request.md",
    "oppie/2025-05-08T14_02_11_plan_request.md",
)


def _fixture(shared_dir: Path, name: str) -> bytes:
    return (shared_dir / "fixtures" / name).read_bytes()


def test_every_oppie_fixture_parses(shared_dir: Path) -> None:
    folder = shared_dir / "fixtures" / "oppie"
    files = sorted(folder.glob("*_plan_request.md"))
    assert len(files) >= 2
    for path in files:
        req = parse_request(path.read_bytes(), str(path))
        assert req.goal
        assert req.path == str(path)
        assert req.form in ("template_a", "freeform")


@pytest.mark.parametrize("name", FIXTURES)
def test_sha256_is_over_the_raw_bytes(shared_dir: Path, name: str) -> None:
    raw = _fixture(shared_dir, name)
    req = parse_request(raw, name)
    assert req.sha256 == hashlib.sha256(raw).hexdigest()
    assert parse_request(raw.decode("utf-8"), name).sha256 == req.sha256


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("variant", ["crlf", "bom", "bom+crlf", "trailing", "cr"])
def test_line_endings_bom_and_trailing_space(shared_dir: Path, name: str, variant: str) -> None:
    raw = _fixture(shared_dir, name)
    text = raw.decode("utf-8")
    if "trailing" in variant:
        text = "\n".join(line + " \t " for line in text.split("\n"))
    if "crlf" in variant:
        text = text.replace("\n", "\r\n")
    if variant == "cr":
        text = text.replace("\n", "\r")
    data = text.encode("utf-8")
    if "bom" in variant:
        data = b"\xef\xbb\xbf" + data
    plain = parse_request(raw, name)
    changed = parse_request(data, name)
    assert changed.sha256 != plain.sha256  # the hash is of what is on disk
    assert changed.form == plain.form
    assert changed.goal == plain.goal
    assert changed.artifacts == plain.artifacts
    assert changed.questions == plain.questions
    assert changed.requested_sections == plain.requested_sections
    assert changed.cycle == plain.cycle


def test_front_matter_with_crlf_and_bom() -> None:
    data = b"\xef\xbb\xbf---\r\ngoal: Ship it\r\ncycle: 2\r\n---\r\n\r\n## Plan\r\nWhen?\r\n"
    req = parse_request(data, "x")
    assert (req.form, req.goal, req.cycle, req.questions.plan) == (
        "frontmatter",
        "Ship it",
        2,
        "When?",
    )


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("---\ngoal: x\n---\n", "frontmatter"),
        ("[🎯 NEXT GOAL] x\n", "template_a"),
        ("---\n#### 📈 CYCLE 3 CONTEXT\n[🎯 NEXT GOAL] x\n---\n", "template_a"),
        ("---\n[🎯 NEXT GOAL] x\n", "template_a"),
        ("---\ngoal: x\n", "frontmatter"),  # unclosed: reported as such
        ("[NEXT GOAL] x\n[PROJECT] y\n", "template_a"),
        ("[NEXT GOAL] a goal label alone\n", "template_a"),
        ("[✅ done] one label that is not the goal\n", "freeform"),
        ("[Project] notes\n", "freeform"),
        ("See [the docs] for details.\n[x] done\n", "freeform"),
        ("Just do it.\n", "freeform"),
    ],
)
def test_detect_form(text: str, form: str) -> None:
    assert detect_form(text) == form


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        (b"", "empty", None),
        (b"  \n\t\n", "empty", None),
        (b"\xef\xbb\xbf\r\n", "empty", None),
        (b"first line\nsecond\x00line", "binary", 2),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary", 3),
        ("goal: café".encode("latin-1"), "not valid UTF-8", 1),
        (b"one\ntwo\nthr\xffee", "not valid UTF-8", 3),
        ("Do it".encode("utf-16"), "UTF-16", 1),
    ],
)
def test_bad_content(data: bytes, message: str, line: int | None) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request(data, "bad")
    assert message in info.value.message
    assert info.value.line == line
    assert info.value.hint  # every error says how to fix it


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2025-02-30", "day is out of range"),
        ("2025-13-01", "month must be in 1..12"),
        ("2025-01-01T25:00:00", "hour must be in 0..23"),
        ("9" * 5000, "Exceeds the limit (4300 digits)"),
        ("0x_", "invalid literal"),
        ("!!int three", "invalid literal"),
        ("!!bool maybe", "as bool"),
        ("!!timestamp soon", "as timestamp"),
        ("[1, {nested: 2025-02-30}]", "day is out of range"),
    ],
)
def test_a_front_matter_value_yaml_cannot_build_is_an_error_at_its_line(
    value: str, problem: str
) -> None:
    # PyYAML raised these as ValueError, KeyError, AttributeError: not a ProtocolError, so
    # the daemon wrote no response at all.
    data = f"---\ngoal: Fix the login\nextra: {value}\n---\n".encode()
    with pytest.raises(ProtocolError, match="not valid YAML: cannot read the value") as info:
        parse_request(data, "bad")
    assert problem in info.value.message
    assert info.value.line == 3
    assert info.value.hint is not None and "line 3" in info.value.hint


def test_str_with_lone_surrogates() -> None:
    with pytest.raises(ProtocolError, match="not valid UTF-8") as info:
        parse_request("goal: x\nbad \udcff here", "s")
    assert info.value.line == 2


def test_size_cap() -> None:
    data = b"Plan it. " * 200
    assert parse_request(data, "ok", max_bytes=len(data)).goal
    with pytest.raises(ProtocolError) as info:
        parse_request(data + b"!", "big", max_bytes=len(data))
    assert "over the" in info.value.message
    assert "watch.max_request_bytes" in (info.value.hint or "")


def test_default_size_cap_is_one_mib() -> None:
    with pytest.raises(ProtocolError, match=r"1\.0 MiB limit"):
        parse_request(b"x" * (1_048_576 + 1), "big")


@pytest.mark.parametrize(
    "text",
    ["---\ncycle: 2\n---\n", "[🔢 CYCLE_NUMBER] 2\n[🎯 NEXT GOAL] none\n", "[🎯 NEXT GOAL] n/a\n"],
)
def test_missing_goal(text: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request(text, "g")
    assert info.value.field == "goal"
    assert "no goal" in info.value.message
    assert info.value.hint


_LINES = st.sampled_from(
    [
        "---",
        "goal: x",
        "cycle: 2",
        "[🎯 NEXT GOAL] ship",
        "[🔢 CYCLE_NUMBER] 3",
        "[❓ PLAN] why",
        "#### 📝 PLANNER RESPONSE",
        "#### 📞 QUESTIONS",
        "======",
        "- a.py: note",
        "1. `## Risks`",
        "Goal:",
        "",
        "  ",
        "## Plan",
        "<!-- c -->",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES | st.text(max_size=20), max_size=12))
def test_any_text_parses_or_raises_protocol_error(lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        req = parse_request(text, "fuzz")
    except ProtocolError as exc:
        assert exc.hint
    else:
        assert req.goal.strip()
        assert req.goal == req.goal.strip()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_parse_or_raise_protocol_error(data: bytes) -> None:
    try:
        parse_request(data, "fuzz")
    except ProtocolError as exc:
        assert exc.hint
