"""Form 1: YAML front matter with the Template A fields, questions as markdown sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import Questions
from nexusd.protocol.parse import parse_request
from nexusd.yamlload import MAX_DEPTH
from tests.yaml_nesting import SHAPES, deep_field, too_deep_cases, too_deep_offset

FULL = """\
---
cycle: 3
project: kitchen-sim
previous_goal: Make shelf placement thread-safe
previous_outcome: Added a per-shelf lock
blockers:
  - Order lost on the overflow shelf
  - pytest-timeout kills the stress test
goal: Fix the lost-order race
history_path: .scratchpad_logs/2025-05-08T11_40_03_plan_response.md
time_box: 2 hours
artifacts: kitchen/shelves.py, kitchen/courier.py
scratchpad_delta: Added a lesson
tools_file: .cursor/available_mcp_tools.md
adr_link: docs/adr/0007-locks.md
---

# Plan Request

## Analysis & Justification

Is a global lock acceptable?

## Plan
<!-- guidance the template adds -->
none

## Blocker Solutions
How do I reproduce the race?

## Best Practices / Mental Models

## MCP Tools
Which profiler?
"""


def test_all_fields() -> None:
    req = parse_request(FULL, "full")
    assert req.form == "frontmatter"
    assert req.cycle == 3
    assert req.project == "kitchen-sim"
    assert req.previous_goal == "Make shelf placement thread-safe"
    assert req.previous_outcome == "Added a per-shelf lock"
    assert req.blockers == (
        "Order lost on the overflow shelf",
        "pytest-timeout kills the stress test",
    )
    assert req.goal == "Fix the lost-order race"
    assert req.history_path == ".scratchpad_logs/2025-05-08T11_40_03_plan_response.md"
    assert req.time_box == "2 hours"
    assert req.artifacts == ("kitchen/shelves.py", "kitchen/courier.py")
    assert req.scratchpad_delta == "Added a lesson"
    assert req.tools_file == ".cursor/available_mcp_tools.md"
    assert req.adr_link == "docs/adr/0007-locks.md"
    assert req.questions == Questions(
        analysis="Is a global lock acceptable?",
        plan=None,
        blocker_solutions="How do I reproduce the race?",
        best_practices=None,
        tools="Which profiler?",
    )
    assert req.warnings == ()


@pytest.mark.parametrize(
    ("lines", "attr", "expected"),
    [
        ("next_goal: Ship it", "goal", "Ship it"),
        ("nextGoal: Ship it", "goal", "Ship it"),
        ("Next Goal: Ship it", "goal", "Ship it"),
        ("available_tools: tools.md", "tools_file", "tools.md"),
        ("availableMcpTools: tools.md", "tools_file", "tools.md"),
        ("blockers: a; b", "blockers", ("a", "b")),
        ("currentBlockers: [a, b]", "blockers", ("a", "b")),
        ("artifacts: [a.py, b.py]", "artifacts", ("a.py", "b.py")),
        ("relevant_artifacts: a.py,b.py", "artifacts", ("a.py", "b.py")),
        ("cycleNumber: '4'", "cycle", 4),
        ("cycle: Cycle 4", "cycle", 4),
        ("cycle:", "cycle", None),
        ("time_box: 90", "time_box", "90"),
        ("adr_link: none", "adr_link", None),
        ("sections: [Risks, Rollout]", "requested_sections", ("Risks", "Rollout")),
    ],
)
def test_aliases_and_value_shapes(lines: str, attr: str, expected: object) -> None:
    goal = "" if "oal:" in lines else "goal: Ship it\n"
    req = parse_request(f"---\n{goal}{lines}\n---\n", "a")
    assert getattr(req, attr) == expected
    assert req.unknown_fields == ()


def test_questions_mapping_in_front_matter() -> None:
    text = "---\ngoal: x\nquestions:\n  plan: In which order?\n  tools: none\n---\n"
    req = parse_request(text, "q")
    assert req.questions == Questions(plan="In which order?")


def test_goal_section_when_front_matter_has_none() -> None:
    text = "---\ncycle: 2\n---\n\n## Goal\n\nRewrite the importer\nin two steps.\n\n## Plan\nhow?\n"
    req = parse_request(text, "g")
    assert req.goal == "Rewrite the importer\nin two steps."
    assert req.questions.plan == "how?"


def test_unknown_fields_are_kept_and_warned() -> None:
    text = "---\ngoal: x\npriority: high\nowner: ana\n---\n## Random\ntext\n"
    req = parse_request(text, "u")
    assert req.unknown_fields == ("priority", "owner")
    assert any("`priority` (line 3)" in w for w in req.warnings)
    assert any("`owner` (line 4)" in w for w in req.warnings)
    assert len(req.warnings) == 2  # the unknown keys; `## Random` is the goal's detail
    assert req.goal == "x\n\n## Random\ntext"


@pytest.mark.parametrize(
    "text",
    [
        "---\n---\n",
        "---\ncycle: 2\n---\n\n# Plan Request\n<!-- guidance -->\n\n## Plan\nIn which order?\n",
    ],
)
def test_front_matter_without_goal(text: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request(text, "e")
    assert info.value.field == "goal"
    assert "goal:" in (info.value.hint or "")


def test_notes_app_front_matter_over_free_form_body() -> None:
    # Obsidian and similar add their own front matter to every note.
    text = (
        "---\ntags: [plan]\ncycle: 2\n---\n\n# Speed up CI\n\n"
        "Related files:\n======\n- .ci/run: the CI entry point\n======\n\n"
        "The suite takes 20 minutes.\n\n## Plan\nIn which order?\n"
    )
    req = parse_request(text, "obsidian")
    assert req.form == "frontmatter"
    assert req.goal == "# Speed up CI\n\nThe suite takes 20 minutes."
    assert req.cycle == 2
    assert req.artifacts == (".ci/run",)
    assert req.artifact_notes == ((".ci/run", "the CI entry point"),)
    assert req.questions.plan == "In which order?"
    assert req.unknown_fields == ("tags",)


def test_front_matter_over_template_a_body() -> None:
    text = (
        "---\nproject: kitchen-sim\ncycle: 9\n---\n"
        "[🔢 CYCLE_NUMBER] 3\n[📂 PROJECT] other\n[🎯 NEXT GOAL (Cycle 3)] Fix the race\n"
        "[🧪 EXTRA] x\n[❓ PLAN] Which order?\n"
    )
    req = parse_request(text, "mixed")
    assert req.goal == "Fix the race"
    assert (req.project, req.cycle) == ("kitchen-sim", 9)  # the front matter wins
    assert req.questions.plan == "Which order?"
    assert any("(line 8)" in w for w in req.warnings)  # file lines, not body lines


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ncycle: 2\ngoal: a: b\n---\n", 3),
        ("---\ngoal: x\n  bad indent: y\n---\n", 3),
        ('---\ngoal: "unclosed\n---\n', 2),
    ],
)
def test_malformed_yaml_reports_the_line(text: str, line: int) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request(text, "m")
    assert "not valid YAML" in info.value.message
    assert info.value.line == line
    assert "quote" in (info.value.hint or "")


def test_front_matter_that_is_not_a_mapping() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request("---\n- goal\n- x\n---\n", "l")
    assert info.value.line == 2
    assert "key: value" in info.value.message


def test_unclosed_front_matter() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request("---\ngoal: x\n\nbody\n", "u")
    assert info.value.line == 1
    assert "never closed" in info.value.message


def test_bad_cycle_names_field_and_line() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request("---\ngoal: x\ncycle: three\n---\n", "c")
    assert (info.value.field, info.value.line) == ("cycle", 3)


def test_questions_must_be_a_mapping() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request("---\ngoal: x\nquestions: why?\n---\n", "c")
    assert info.value.field == "questions"


@pytest.mark.parametrize(
    "lines",
    [
        "goal: {a: b}",
        "goal: [[a]]",
        "blockers: [[a, b]]",
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\ngoal: *b",
    ],
)
def test_nested_values_are_refused(lines: str) -> None:
    text = f"---\n{lines}\n---\n" if "goal" in lines else f"---\ngoal: x\n{lines}\n---\n"
    with pytest.raises(ProtocolError) as info:
        parse_request(text, "n")
    assert "nested" in info.value.message
    assert info.value.field in ("goal", "blockers")
    assert info.value.line is not None


def test_list_goal_is_joined_lines() -> None:
    assert parse_request("---\ngoal: [first step, second step]\n---\n", "l").goal == (
        "first step\nsecond step"
    )


def test_many_unknown_fields_give_few_warnings() -> None:
    keys = "".join(f"extra{i}: v\n" for i in range(50))
    req = parse_request(f"---\ngoal: x\n{keys}---\n", "many")
    assert len(req.unknown_fields) == 50
    assert len(req.warnings) == 20
    assert req.warnings[-1] == "… and 31 more warnings like these"


@pytest.mark.parametrize(
    ("body", "goal"),
    [
        ("\nWhen I call load() it fails.\n", "Fix load\n\nWhen I call load() it fails."),
        (
            "<!-- guidance\n  over two lines -->\n# Plan request\n\nIt fails.\n## Plan\nhow?\n",
            "Fix load\n\nIt fails.",
        ),
        (
            "## Why `load()` fails\n\nTraceback …\n\n## Plan\nhow?\n",
            "Fix load\n\n## Why `load()` fails\n\nTraceback …",
        ),
        ("\n# Plan request\n<!-- guidance -->\n\n## Plan\nhow?\n", "Fix load"),
        ("---\n\nIt fails.\n***\nmore\n", "Fix load\n\nIt fails.\nmore"),
        (
            "The script:\n```bash\n# build it\n## Plan the run\nmake\n---\n```\n## Plan\nhow?\n",
            "Fix load\n\nThe script:\n```bash\n# build it\n## Plan the run\nmake\n---\n```",
        ),
        ("It fails.\n<!-- unclosed\nmore\n", "Fix load\n\nIt fails.\n<!-- unclosed\nmore"),
    ],
    ids=[
        "text",
        "after-a-title-and-comments",
        "a-section",
        "only-a-title-and-comments",
        "rules",
        "a-code-block-whole",
        "an-unclosed-comment",
    ],
)
def test_the_body_under_a_front_matter_goal_is_the_rest_of_the_goal(body: str, goal: str) -> None:
    # What a person or an agent writes below a one-line goal (the report, its traceback) is
    # read with it; question sections stay questions, a template's title and comments go.
    req = parse_request(f"---\ngoal: Fix load\n---\n{body}", "u")
    assert (req.goal, req.warnings) == (goal, ())
    assert req.questions.plan == ("how?" if "## Plan" in body else None)


def test_a_template_a_body_under_a_front_matter_goal_fills_its_other_fields(
    shared_dir: Path,
) -> None:
    fixture = shared_dir / "fixtures" / "oppie" / "2025-05-08T14_02_11_plan_request.md"
    body = fixture.read_text("utf-8")
    req = parse_request(f"---\ngoal: Fix load\n---\n{body}", "t")
    assert req.goal == "Fix load"  # the front matter's wins
    assert req.cycle == 3 and req.blockers[0].startswith("Order lost on the overflow shelf")
    assert req.questions.analysis is not None


def test_many_unclosed_comments_in_a_body_are_read_in_linear_time() -> None:
    # A regex looking for `-->` from every `<!--` took 34 s on 200 KB of them.
    req = parse_request("---\ngoal: Fix load\n---\n" + "<!--\n" * 40_000, "c")
    assert req.goal.startswith("Fix load\n\n<!--")


def test_a_goal_section_and_a_details_section_are_one_goal() -> None:
    req = parse_request("---\ncycle: 2\n---\n## Goal\nFix load\n## Details\nIt fails.\n", "g")
    assert req.goal == "Fix load\n\n## Details\nIt fails."


@pytest.mark.parametrize(("shape", "levels"), too_deep_cases())
def test_front_matter_nested_too_deep_is_an_error_saying_to_flatten_it(
    shape: str, levels: int
) -> None:
    # 200 levels of mappings were a RecursionError: `nexusd plan` exited 70 with a
    # traceback, and the daemon wrote no response and retried the request without end.
    raw = f"---\ngoal: x\n{deep_field(shape, levels)}---\n\nbody\n".encode()
    with pytest.raises(ProtocolError) as info:
        parse_request(raw, "d_plan_request.md")
    line = 3 + too_deep_offset(shape)  # file lines: `---`, `goal: x`, then `deep:`
    assert info.value.message == (
        f"in the front matter, lists and mappings nest deeper than {MAX_DEPTH} levels,"
        f" on line {line}"
    )
    assert (info.value.line, info.value.field) == (line, None)
    assert (info.value.hint or "").startswith(f"flatten it (nexusd reads at most {MAX_DEPTH}")


@pytest.mark.parametrize("shape", SHAPES)
def test_front_matter_nested_up_to_the_limit_parses_as_before(shape: str) -> None:
    req = parse_request(f"---\ngoal: x\n{deep_field(shape, MAX_DEPTH - 1)}---\n", "d")
    assert req.goal == "x"
    assert req.unknown_fields == ("deep",)
