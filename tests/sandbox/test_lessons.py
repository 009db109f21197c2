"""Lessons: 3 identical failures in a row → one lesson; failing → passing → a solution."""

from __future__ import annotations

import json
from pathlib import Path

from nexusd.paths import find_repo
from nexusd.sandbox.lessons import evaluate, pending_lessons
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.workspace import snapshot_tree
from tests.conftest import git

FAIL = "FAILED tests/test_a.py::test_x - assert 1 == 2\n"


def _result(ok: bool, tree: str = "t", text: str = FAIL, name: str = "unit") -> CheckResult:
    return CheckResult(
        name=name,
        backend="bwrap",
        exit_code=0 if ok else 1,
        duration_ms=1,
        stdout_head="" if ok else text,
        tree=tree,
    )


def _cycles(outcomes: list[CheckResult]) -> list[list[dict[str, object]]]:
    history: dict[str, object] = {}
    seen = []
    for i, result in enumerate(outcomes):
        history, events = evaluate(history, [result], f"2026-01-0{i + 1}")
        seen.append(events)
    return seen


def test_three_identical_failures_make_one_lesson() -> None:
    events = _cycles([_result(False)] * 5)
    assert [len(e) for e in events] == [0, 0, 1, 0, 0]
    assert events[2][0]["kind"] == "lesson"


def test_a_different_failure_restarts_the_streak() -> None:
    other = "FAILED tests/test_b.py::test_y - assert 0\n"
    events = _cycles([_result(False), _result(False, text=other), _result(False), _result(False)])
    assert all(not e for e in events)


def test_the_streak_can_teach_again_after_a_pass() -> None:
    events = _cycles([_result(False)] * 3 + [_result(True)] + [_result(False)] * 3)
    kinds = [[e["kind"] for e in cycle] for cycle in events]
    assert kinds == [[], [], ["lesson"], ["solution"], [], [], ["lesson"]]


def test_sandbox_errors_teach_nothing() -> None:
    broken = CheckResult(name="unit", backend="docker", exit_code=None, duration_ms=1, error="x")
    assert _cycles([broken] * 4) == [[], [], [], []]


def test_pending_lessons_writes_state_and_crystallizes_with_a_diffstat(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    bad = snapshot_tree(layout)
    lessons = []
    for _ in range(3):
        lessons += pending_lessons(layout, [_result(False, tree=bad)])
    assert [lesson.kind for lesson in lessons] == ["lesson"]
    assert "3 consecutive cycles" in lessons[0].markdown
    assert "tests/test_a.py::test_x" in lessons[0].markdown
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    good = snapshot_tree(layout)
    fixed = pending_lessons(layout, [_result(True, tree=good)])
    assert [lesson.kind for lesson in fixed] == ["solution"]
    text = fixed[0].markdown
    assert "calc.py | 2 +-" in text
    assert "tests/test_a.py::test_x" in text and bad[:12] in text and good[:12] in text
    state = json.loads((layout.state_dir / "check_history.json").read_text())
    assert [r["status"] for r in state["unit"]["runs"]] == ["failed"] * 3 + ["passed"]
    assert git(repo, "status", "--porcelain") == "?? calc.py\n"
