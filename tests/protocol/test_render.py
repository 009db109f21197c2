"""Rendering responses and requests, and reading them back."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import (
    STANDARD_SECTIONS,
    ErrorInfo,
    PlanResponse,
    Questions,
    ResponseMeta,
    Section,
)
from nexusd.protocol.fields import NONE_WORDS
from nexusd.protocol.parse import parse_request
from nexusd.protocol.render import (
    EMPTY_SECTION,
    error_info,
    error_sections,
    markdown_sections,
    meta_from_mapping,
    parse_response,
    read_response_meta,
    render_request,
    render_response,
)

META = ResponseMeta(
    request_file=".scratchpad_logs/2025-05-08T14_02_11_plan_request.md",
    request_sha256="a" * 64,
    revision=2,
    status="ok",
    planner="offline",
    created_at="2025-05-08T14:02:11.500000+00:00",
    cycle=3,
    timings_ms=(("parse", 0.25), ("librarian", 12.5), ("write", 1.0)),
    checkpoint="refs/nexus/checkpoints/abc123",
    checks=(("pytest", "passed"), ("ruff", "failed")),
    warnings=("unknown field `priority` (line 3) was kept but not used",),
)
RESPONSE = PlanResponse(
    meta=META,
    title="Plan for cycle 3: fix the lost-order race",
    sections=tuple(
        Section(title, f"Body of {title}.\n\n- item one\n- item two") for title in STANDARD_SECTIONS
    ),
)


def test_response_layout() -> None:
    text = render_response(RESPONSE)
    assert text.startswith("---\nprotocol_version: 1\nrequest_file: ")
    head, body = text.split("\n---\n\n", 1)
    keys = list(yaml.safe_load(head.removeprefix("---\n")))
    assert keys == [
        "protocol_version",
        "request_file",
        "request_sha256",
        "revision",
        "status",
        "cycle",
        "planner",
        "timings_ms",
        "created_at",
        "checkpoint",
        "restore",
        "checks",
        "warnings",
    ]
    assert body.startswith("# Plan for cycle 3: fix the lost-order race\n")
    positions = [body.index(f"\n## {title}\n") for title in STANDARD_SECTIONS]
    assert positions == sorted(positions)
    assert text.endswith("- item two\n")
    assert render_response(RESPONSE) == text  # deterministic


def test_read_response_meta() -> None:
    meta = read_response_meta(render_response(RESPONSE))
    assert meta is not None
    assert meta["request_sha256"] == "a" * 64
    assert meta["revision"] == 2
    assert meta["status"] == "ok"
    assert meta["timings_ms"] == {"parse": 0.25, "librarian": 12.5, "write": 1.0}
    assert meta["checks"] == {"pytest": "passed", "ruff": "failed"}
    assert "error" not in meta
    assert meta_from_mapping(meta) == META


def test_parse_response_round_trip() -> None:
    assert parse_response(render_response(RESPONSE)) == RESPONSE


def test_crlf_and_bom_response_is_still_read() -> None:
    text = "\ufeff" + render_response(RESPONSE).replace("\n", "\r\n")
    assert parse_response(text) == RESPONSE


def test_error_response() -> None:
    exc = ProtocolError("the request has no goal", hint="add a `goal:` line", line=4, field="goal")
    info = error_info(exc)
    assert info == ErrorInfo("the request has no goal", "add a `goal:` line", 4, "goal")
    meta = ResponseMeta(
        request_file="x_plan_request.md",
        request_sha256="b" * 64,
        revision=1,
        status="error",
        planner="offline",
        created_at="2025-01-01T00:00:00+00:00",
        error=info,
    )
    resp = PlanResponse(meta, "Plan request could not be answered", error_sections(info))
    text = render_response(resp)
    read = read_response_meta(text)
    assert read is not None
    assert read["status"] == "error"
    assert read["error"] == {
        "message": "the request has no goal",
        "fix": "add a `goal:` line",
        "line": 4,
        "field": "goal",
    }
    assert "line 4, field `goal`" in text
    assert parse_response(text) == resp


def test_error_info_without_hint_still_has_a_fix() -> None:
    assert error_info(ProtocolError("bad")).fix


def test_empty_section_reads_well_and_round_trips() -> None:
    resp = PlanResponse(META, "T", (Section("Blocker Solutions", "  \n"),))
    text = render_response(resp)
    assert f"## Blocker Solutions\n\n{EMPTY_SECTION}\n" in text
    parsed = parse_response(text)
    assert parsed is not None and parsed.sections == (Section("Blocker Solutions", ""),)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# Just markdown\n",
        "---\ngoal: a request, not a response\n---\n",
        "---\n: : bad yaml [\n---\n",
        "---\nrequest_sha256: x\n",  # never closed
        "---\n- a list\n---\n",
        # Values the YAML loader cannot build (it raised ValueError / KeyError through).
        "---\nrequest_sha256: x\nrevision: 1\nstatus: ok\ncreated_at: 2025-02-30\n---\n",
        "---\nrequest_sha256: x\nrevision: !!int one\nstatus: !!bool ok\n---\n",
    ],
)
def test_not_a_response(text: str) -> None:
    assert read_response_meta(text) is None
    assert parse_response(text) is None


def test_incomplete_meta_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="incomplete"):
        meta_from_mapping({"request_sha256": "x", "revision": 1, "status": "ok"})


def test_markdown_sections_skip_fenced_code() -> None:
    title, sections = markdown_sections("# T\n\n## A\n```\n## not a heading\n```\n## B\nb\n")
    assert title == "T"
    assert [s.title for s in sections] == ["A", "B"]
    assert "## not a heading" in sections[0].body


def test_render_request_minimal_round_trip() -> None:
    text = render_request(goal="Fix the flaky login test")
    req = parse_request(text, "new")
    assert req.form == "frontmatter"
    assert req.goal == "Fix the flaky login test"
    assert req.cycle is None
    assert req.questions == Questions()
    assert req.warnings == ()
    for key in ("cycle:", "project:", "blockers:", "history_path:", "tools_file:", "adr_link:"):
        assert f"\n{key}" in text
    for heading in ("## Analysis", "## Plan", "## Blocker Solutions", "## Best Practices"):
        assert heading in text


_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029"),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip().lower() not in NONE_WORDS)
_item = _text.filter(
    lambda s: (
        not any(c in s for c in ",;，；、`")
        and s.strip() == s
        and not s.startswith(("-", "*", "+", "•"))
    )
)


@settings(max_examples=60, deadline=None)
@given(
    goal=_text.map(str.strip).filter(bool),
    cycle=st.none() | st.integers(min_value=0, max_value=10_000),
    project=st.none() | _text.map(str.strip).filter(bool),
    blockers=st.lists(_item.filter(bool), max_size=3),
    artifacts=st.lists(_item.filter(bool), max_size=3),
    plan=st.none() | st.sampled_from(["In which order?", "Why not a queue?\nAnd retries?"]),
)
def test_render_request_round_trips(
    goal: str,
    cycle: int | None,
    project: str | None,
    blockers: list[str],
    artifacts: list[str],
    plan: str | None,
) -> None:
    text = render_request(
        goal=goal,
        cycle=cycle,
        project=project,
        blockers=blockers,
        artifacts=artifacts,
        time_box="2 hours",
        questions=Questions(plan=plan),
    )
    req = parse_request(text, "rt")
    assert req.form == "frontmatter"
    assert req.goal == goal
    assert req.cycle == cycle
    assert req.project == project
    assert req.blockers == tuple(blockers)
    assert req.artifacts == tuple(artifacts)
    assert req.time_box == "2 hours"
    assert req.questions == Questions(plan=plan)
    assert req.warnings == ()


@pytest.mark.parametrize(
    ("message", "line", "said"),
    [
        ("a key is nested too deep, on line 3", 3, "a key is nested too deep, on line 3"),
        ("`goal` is given twice, on lines 2 and 5", 5, "`goal` is given twice, on lines 2 and 5"),
        ("`goal` is given twice, on lines 2 and 5", 2, "`goal` is given twice, on lines 2 and 5"),
        ("the request has no goal", 4, "the request has no goal (line 4)"),
        ("see line 13", 3, "see line 13 (line 3)"),  # another line: still said
    ],
)
def test_an_error_says_its_line_once(message: str, line: int, said: str) -> None:
    (wrong, _fix) = error_sections(ErrorInfo(message, "fix it", line, None))
    assert wrong.body == said
