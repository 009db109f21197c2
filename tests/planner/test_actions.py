from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nexusd.code.rank import FileHit
from nexusd.config.ranges import RANGES
from nexusd.planner.sequence import MIN_ACTIONS, plan_actions
from tests.plan_helpers import bundle_for, config, kitchen_repo, request


@pytest.mark.parametrize("max_actions", [3, 5, 8, 12])
@pytest.mark.parametrize("with_previous", [True, False])
def test_plan_is_bounded_review_first_checks_last(
    repo: Path, max_actions: int, with_previous: bool
) -> None:
    kitchen_repo(repo)
    if with_previous:
        folder = repo / ".scratchpad_logs"
        folder.mkdir()
        (folder / "2025-05-08T11_40_03_plan_response.md").write_text(
            "---\nrequest_sha256: abc\nrevision: 1\nstatus: ok\ncycle: 2\n---\n\n"
            "# Plan for cycle 2: shelves\n\n## Plan\n\n1. Old step\n"
        )
    bundle = bundle_for(repo, request())
    actions = plan_actions(bundle, max_actions)
    assert 3 <= len(actions) <= max_actions
    assert (actions[0].step, actions[-1].step) == ("review", "checks")
    if with_previous:
        assert actions[0].files == (".scratchpad_logs/2025-05-08T11_40_03_plan_response.md",)
        assert "1 actions" in actions[0].how
    assert all(a.verify for a in actions)
    if max_actions >= 8:
        # One action per blocker, in the blockers' order, and one on the artifact at fault.
        blockers = bundle.request.blockers
        titles = [a.title for a in actions]
        at = [
            next(i for i, t in enumerate(titles) if b[:20] in t or f"blocker {n}" in t)
            for n, b in enumerate(blockers, start=1)
        ]
        assert at == sorted(at)
        assert any("kitchen/shelves.py" in a.files for a in actions)


@pytest.mark.parametrize("max_actions", [0, 1, 2, 3])
@pytest.mark.parametrize(
    "goal",
    [
        "Find and fix the lost-order race on the overflow shelf",
        "Add a per-courier delivery log",
        "Why does the overflow shelf have its own class?",
    ],
)
def test_the_shortest_plan_still_has_a_step_toward_its_goal(
    repo: Path, max_actions: int, goal: str
) -> None:
    # Below the config's floor (a caller passing its own number) the floor holds too.
    kitchen_repo(repo)
    bundle = bundle_for(repo, request(goal=goal, blockers=()))
    actions = plan_actions(bundle, max_actions)
    assert len(actions) == MIN_ACTIONS == RANGES["planner.max_actions"].low
    assert actions[0].step == "review"
    assert actions[-1].step in ("checks", "answer")
    assert any(a.step not in ("review", "checks") for a in actions), [a.step for a in actions]


def test_configured_checks_drive_the_last_action(repo: Path) -> None:
    cfg = config(
        checks=[{"name": "unit", "run": "pytest -q tests"}, {"name": "lint", "run": "ruff check"}]
    )
    bundle = bundle_for(repo, request(), cfg)
    last = plan_actions(bundle, 8)[-1]
    assert "unit: `pytest -q tests`" in last.how and "lint: `ruff check`" in last.how
    assert "`nexusd check`" in last.how


def test_missing_artifacts_get_a_create_action(repo: Path) -> None:
    bundle = bundle_for(repo, request(artifacts=("src/billing/invoice.py",), blockers=()))
    create = [a for a in plan_actions(bundle, 8) if a.step == "create"]
    assert [a.files for a in create] == [("src/billing/invoice.py",)]


@pytest.mark.parametrize(
    "test_file",
    ["core/collection/timingwheel_test.go", "tests/test_wheel.py", "src/wheel.spec.ts"],
)
def test_the_test_step_names_the_ranked_test_file_in_any_language(
    repo: Path, test_file: str
) -> None:
    hits = (FileHit("core/collection/timingwheel.go", 2.0, ()), FileHit(test_file, 1.0, ()))
    req = request(goal="The timing wheel drops a task it was given", artifacts=(), blockers=())
    bundle = dataclasses.replace(bundle_for(kitchen_repo(repo), req), code_hits=hits)
    test = next(a for a in plan_actions(bundle, 8) if a.step == "test")
    assert test.files == (test_file,)


def test_the_test_step_names_the_best_tests_of_the_whole_ranking(repo: Path) -> None:
    hits = (FileHit("core/wheel.py", 2.0, ()), FileHit("tests/test_cli.py", 1.0, ()))
    best = (FileHit("tests/test_wheel.py", 0.9, ()), FileHit("tests/test_timer.py", 0.5, ()))
    req = request(goal="The timing wheel drops a task it was given", artifacts=(), blockers=())
    bundle = dataclasses.replace(
        bundle_for(kitchen_repo(repo), req), code_hits=hits, code_tests=best
    )
    test = next(a for a in plan_actions(bundle, 8) if a.step == "test")
    assert test.files == ("tests/test_wheel.py", "tests/test_timer.py")
    assert "`tests/test_wheel.py`" in test.title
