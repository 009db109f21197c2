"""A key given twice in a request's front matter is refused, not silently overwritten."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nexusd.errors import ProtocolError
from nexusd.protocol.parse import parse_request
from nexusd.protocol.render import read_response_meta

# Two goals, far apart: YAML kept the second and the plan was for the billing rewrite.
TWO_GOALS = """\
---
cycle: 3
goal: Fix the flaky login test
blockers:
  - login times out on CI
goal: Rewrite the billing module in Rust
---
"""


def _refused(text: str) -> ProtocolError:
    """The error parsing this request raises."""
    with pytest.raises(ProtocolError) as caught:
        parse_request(text, "r_plan_request.md")
    return caught.value


@pytest.mark.parametrize(
    ("text", "message", "line", "field"),
    [
        (TWO_GOALS, "`goal` is given twice in the front matter, on lines 3 and 6", 6, "goal"),
        # The same value twice is refused too: one rule, and the file still needs fixing.
        ("---\ngoal: a\ncycle: 1\ncycle: 1\n---\n", "`cycle` is given twice", 4, "cycle"),
        ("---\n'goal': a\n\"goal\": b\n---\n", "on lines 2 and 3", 3, "goal"),
        (
            "---\ngoal: a\nquestions:\n  plan: In which order?\n  plan: Why?\n---\n",
            "`plan` is given twice under `questions` in the front matter, on lines 4 and 5",
            5,
            "questions",
        ),
        (
            "---\ngoal: a\nquestions: {plan: x, plan: y}\n---\n",
            "`plan` is given twice under `questions` in the front matter, on line 3",
            3,
            "questions",
        ),
    ],
    ids=["two-goals", "same-value", "quoted", "nested", "flow"],
)
def test_a_repeated_key_is_an_error_naming_it(
    text: str, message: str, line: int, field: str
) -> None:
    refused = _refused(text)
    assert message in str(refused)
    assert (refused.line, refused.field) == (line, field)
    assert refused.hint is not None and "delete the other" in refused.hint


def test_two_aliases_of_one_field_stay_a_warning() -> None:
    # Different keys are valid YAML: the documented rule (later value, a warning) holds.
    req = parse_request("---\ngoal: first\nnext_goal: second\n---\n", "r_plan_request.md")
    assert req.goal == "second"
    assert req.warnings == ("`next_goal` repeats `goal`; the later value is used",)


def test_merge_keys_are_not_repeats() -> None:
    text = "---\ngoal: a\nquestions:\n  <<: {plan: x}\n  plan: y\n---\n"
    assert parse_request(text, "r_plan_request.md").questions.plan == "y"


def test_nexusd_plan_answers_a_repeated_key_with_an_error_response(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    request = folder / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(TWO_GOALS, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", "plan", str(request)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 4, proc.stderr  # was 0, with a plan for the second goal
    assert "`goal` is given twice" in proc.stderr
    text = (folder / "2025-05-08T14_02_11_plan_response.md").read_text(encoding="utf-8")
    meta = read_response_meta(text)
    assert meta is not None and meta["status"] == "error"
    assert meta["error"]["line"] == 6 and meta["error"]["field"] == "goal"
    assert "keep one `goal:`" in meta["error"]["fix"]
    assert "Rewrite the billing module" not in text.split("---", 2)[2]  # no plan for it


# Where the key is, from the YAML's structure, not a guess from the text of its line.
@pytest.mark.parametrize(
    ("text", "message", "line", "field"),
    [
        # A quoted key with `: ` in it is a top-level key, not one "under `goal`".
        (
            "---\ngoal: a\n'a: b': 1\n'a: b': 2\n---\n",
            "`a: b` is given twice in the front matter, on lines 3 and 4",
            4,
            "a: b",
        ),
        (
            "---\ngoal: a\nquestions:\n  'plan: now': x\n  'plan: now': y\n---\n",
            "`plan: now` is given twice under `questions` in the front matter, on lines 4 and 5",
            5,
            "questions",
        ),
        # An alias used as a key: the line where `*k` is written, not the anchor's line.
        (
            "---\nx: &k goal\ngoal: a\n*k : b\n---\n",
            "`goal` is given twice in the front matter (written `goal` and `*k`), on lines 3 and 4",
            4,
            "goal",
        ),
        (
            "---\ngoal: a\nq: &k plan\nquestions:\n  plan: x\n  *k : y\n---\n",
            "`plan` is given twice under `questions` in the front matter (written `plan` and"
            " `*k`), on lines 5 and 6",
            6,
            "questions",
        ),
        # `~`, `null` and an empty key are one key: null, named as YAML writes it.
        (
            "---\ngoal: a\n~: 1\ncycle: 2\nnull: 3\n---\n",
            "`null` is given twice in the front matter (written `~` and `null`), on lines 3 and 5",
            5,
            "null",
        ),
        (
            "---\ngoal: a\nquestions:\n  ~: 1\n  null: 2\n---\n",
            "`null` is given twice under `questions` in the front matter (written `~` and"
            " `null`), on lines 4 and 5",
            5,
            "questions",
        ),
        (
            "---\ngoal: a\nblockers:\n  - {x: 1, x: 2}\n---\n",
            "`x` is given twice under `blockers[0]` in the front matter, on line 4",
            4,
            "blockers",
        ),
    ],
    ids=[
        "quoted-colon",
        "quoted-colon-nested",
        "alias",
        "alias-nested",
        "null",
        "null-nested",
        "in-list",
    ],
)
def test_a_repeated_key_is_placed_by_the_yaml_structure(
    text: str, message: str, line: int, field: str
) -> None:
    refused = _refused(text)
    assert message in str(refused)
    assert (refused.line, refused.field) == (line, field)


def test_the_hint_quotes_the_keys_as_written() -> None:
    refused = _refused("---\ngoal: a\n~: 1\nnull: 2\n---\n")
    assert refused.hint is not None
    assert refused.hint.startswith("keep one of `~:` and `null:` and delete the other")
    refused = _refused("---\ngoal: a\n'a: b': 1\n'a: b': 2\n---\n")
    assert refused.hint is not None
    assert refused.hint.startswith("keep one `'a: b':` and delete the other")


def test_what_cannot_be_placed_is_said_to_be_unknown() -> None:
    # libyaml reads a tab before a comment; PyYAML's Python parser, which places keys,
    # does not: the mapping and an alias's line are then unknown, and said to be.
    text = "---\nx: &k goal\ngoal: a\n*k : b\nnote: x\t# why\n---\n"
    refused = _refused(text)
    assert str(refused).startswith(
        "`goal` is given twice in the front matter (nexusd could not tell in which mapping),"
        " on line 3 and through an alias, on a line nexusd cannot tell"
    )
    assert (refused.line, refused.field) == (3, None)
    text = "---\ngoal: a\nquestions:\n  plan: x\n  plan: y\nnote: x\t# why\n---\n"
    refused = _refused(text)
    assert "could not tell in which mapping), on lines 4 and 5" in str(refused)
    assert (refused.line, refused.field) == (5, None)


def _code_spans(markdown: str) -> list[str]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parseInline(markdown)[0].children or []
    return [t.content for t in tokens if t.type == "code_inline"]


def test_a_repeated_key_with_a_backtick_stays_one_code_span() -> None:
    # The error is the response's "What Is Wrong", its hint "How to Fix It" (markdown).
    refused = _refused('---\ngoal: a\n"we`ird": 1\n"we`ird": 2\n---\n')
    assert _code_spans(str(refused.args[0]))[0] == "we`ird"
    assert refused.hint is not None
    assert _code_spans(refused.hint)[0] == '"we`ird":'
