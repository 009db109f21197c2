"""Lessons: 3 identical failures in a row → one lesson; failing → passing → a solution."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from nexusd.paths import find_repo
from nexusd.sandbox.lessons import OWN_PATHS, evaluate, pending_lessons
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.workspace import snapshot_tree
from tests.conftest import git

FAIL = "FAILED tests/test_a.py::test_x - assert 1 == 2\n"
OWN = (*OWN_PATHS, ".scratchpad_logs")


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
    """Each outcome is one attempt: its tree differs from the one before (unless given)."""
    history: dict[str, object] = {}
    seen = []
    for i, outcome in enumerate(outcomes):
        tree = f"t{i}" if outcome.tree == "t" else outcome.tree
        result = dataclasses.replace(outcome, tree=tree)
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


def test_runs_on_unchanged_user_files_are_one_attempt() -> None:
    # Three requests answered on the same code (only nexusd's own files differ, so the
    # trees differ but the user's key is the same): nothing was tried, nothing to learn.
    history: dict[str, object] = {}
    seen = []
    for i in range(4):
        result = _result(False, tree=f"tree{i}")
        history, events = evaluate(history, [result], f"2026-01-0{i + 1}", {f"tree{i}": "same"})
        seen += events
    assert seen == []
    # A pass on the same files is not a fix either (a flaky check, not a solution).
    history, events = evaluate(history, [_result(True, tree="x")], "2026-01-09", {"x": "same"})
    assert events == []


def test_sandbox_errors_teach_nothing() -> None:
    broken = CheckResult(name="unit", backend="docker", exit_code=None, duration_ms=1, error="x")
    assert _cycles([broken] * 4) == [[], [], [], []]


def test_pending_lessons_writes_state_and_crystallizes_with_a_diffstat(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    lessons = []
    for attempt in range(3):
        (repo / "calc.py").write_text(f"def add(a, b):\n    return a - b - {attempt}\n")
        bad = snapshot_tree(layout)
        lessons += pending_lessons(layout, [_result(False, tree=bad)])
    assert [lesson.kind for lesson in lessons] == ["lesson"]
    assert "3 consecutive attempts" in lessons[0].markdown
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


def test_nexusd_own_files_are_neither_attempts_nor_the_users_change(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    lessons = []
    for i in range(4):
        # Between cycles only nexusd writes: a response, MEMORY.md, the daily note.
        (repo / ".scratchpad_logs").mkdir(exist_ok=True)
        (repo / ".scratchpad_logs" / f"{i}_plan_response.md").write_text(f"answer {i}\n")
        (repo / "MEMORY.md").write_text(f"# Memory\n\n- note {i}\n")
        (repo / "memory" / "daily").mkdir(parents=True, exist_ok=True)
        (repo / "memory" / "daily" / "2026-01-01.md").write_text(f"## 10:0{i} request: ok\n")
        tree = snapshot_tree(layout)
        lessons += pending_lessons(layout, [_result(False, tree=tree)], own=OWN)
    assert lessons == []
    # The user fixes calc.py; nexusd writes its files again: the diffstat is the user's.
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / ".scratchpad_logs" / "9_plan_response.md").write_text("answer 9\n")
    (repo / "MEMORY.md").write_text("# Memory\n\n- note 9\n")
    (repo / "memory" / "daily" / "2026-01-01.md").write_text("## 11:00 request: ok\n")
    fixed = pending_lessons(layout, [_result(True, tree=snapshot_tree(layout))], own=OWN)
    assert [lesson.kind for lesson in fixed] == ["solution"]
    assert "calc.py" in fixed[0].markdown
    for own in ("MEMORY.md", "memory/daily", ".scratchpad_logs", "plan_response"):
        assert own not in fixed[0].markdown
