"""The examples in PROTOCOL.md parse the way PROTOCOL.md says they do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexusd.protocol.parse import parse_request
from nexusd.protocol.render import markdown_sections, read_response_meta

DOC = Path(__file__).resolve().parents[2] / "PROTOCOL.md"


def _examples() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(r"^```markdown\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)


@pytest.fixture(scope="module")
def examples() -> list[str]:
    found = _examples()
    assert len(found) == 6, "PROTOCOL.md examples changed: update this test"
    return found


def test_front_matter_example(examples: list[str]) -> None:
    req = parse_request(examples[0], "doc")
    assert req.form == "frontmatter"
    assert req.goal == "Find and fix the lost-order race on the overflow shelf"
    assert req.cycle == 3
    assert len(req.blockers) == 2
    assert req.artifacts == (
        "kitchen/shelves.py",
        "kitchen/courier.py",
        "tests/test_concurrency.py",
    )
    assert req.scratchpad_delta == 'Added "Lessons: never hold two shelf locks at once"'
    assert req.questions.analysis and req.questions.blocker_solutions
    assert req.questions.plan is None
    assert req.warnings == ()


def test_template_a_examples(examples: list[str]) -> None:
    english = parse_request(examples[1], "doc")
    assert english.form == "template_a"
    assert english.cycle == 3
    assert english.goal.startswith("Find and fix the lost-order race")
    chinese = parse_request(examples[2], "doc")
    assert chinese.form == "template_a"
    assert (chinese.cycle, chinese.goal) == (4, "让压力测试在 30 秒内完成")
    assert chinese.blockers == ("压力测试太慢", "CI 超时")
    assert chinese.questions.blocker_solutions == "如何让测试更快？"


def test_free_form_example(examples: list[str]) -> None:
    req = parse_request(examples[3], "doc")
    assert req.form == "freeform"
    assert req.goal.startswith("Invoice totals are off by one cent")
    assert req.goal.endswith("keeps existing invoices reproducible.")
    assert req.artifacts == ("src/billing/invoice.py", "tests/test_invoice.py")
    assert len(req.requested_sections) == 4


def test_response_examples(examples: list[str]) -> None:
    ok = read_response_meta(examples[4])
    assert ok is not None
    assert (ok["status"], ok["revision"], ok["protocol_version"]) == ("ok", 1, 1)
    _, sections = markdown_sections(examples[4].split("\n---\n", 1)[1])
    assert [s.title for s in sections] == [
        "Analysis and Justification",
        "Plan",
        "Blocker Solutions",
        "Best Practices",
        "Recommended Tool Calls",
        "Executor Follow-up Checklist",
    ]
    error = read_response_meta(examples[5])
    assert error is not None
    assert error["status"] == "error"
    assert error["error"]["field"] == "goal"
