"""The budget of a whole answer: counted from when the answer started, not from the first
model call; the model gets what remains, and nothing when nothing does.

Only bounds that cannot flake are asserted (what is left can only shrink with time)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from nexusd.models.budget import (
    MIN_CALL_S,
    RESERVE_S,
    AnswerStart,
    ModelBudget,
    budget_left,
    current_budget,
    model_budget,
)


def test_the_budget_counts_from_the_answers_start_less_a_reserve() -> None:
    start = AnswerStart(time.monotonic() - 2.0, "the command started")
    budget = ModelBudget(3.0, start)
    # 3 s from a start 2 s ago, less the reserve for writing the response: at most 0.7 s.
    assert budget.left() <= 3.0 - 2.0 - RESERVE_S
    assert not ModelBudget(600.0, start).spent()


def test_a_budget_spent_before_the_model_says_so_and_how_to_raise_it() -> None:
    budget = ModelBudget(3.0, AnswerStart(time.monotonic() - 10.0, "the command started"))
    assert budget.left() == 0.0
    assert budget.spent()
    note = budget.spent_note()
    assert "planner.timeout_ms (3 s) was spent before the model could be asked" in note
    assert "since the command started" in note
    assert "raise planner.timeout_ms in .nexus/config.yaml" in note


def test_a_budget_that_leaves_less_than_a_call_needs_is_spent() -> None:
    start = AnswerStart.now("the answer started")
    assert ModelBudget(RESERVE_S + MIN_CALL_S / 2, start).spent()


def test_the_budget_is_set_for_the_block_only() -> None:
    assert current_budget() is None
    assert budget_left() is None
    start = AnswerStart(time.monotonic() - 1.0, "the daemon picked up the request")
    with model_budget(60.0, start) as budget:
        assert current_budget() is budget
        assert budget.start == start
        left = budget_left()
        assert left is not None
        assert left <= 60.0 - 1.0 - RESERVE_S
    assert current_budget() is None


def test_a_process_knows_when_it_started() -> None:
    # A fresh interpreter that sleeps first: its age includes the sleep and its start-up.
    code = (
        "import time; time.sleep(0.3)\n"
        "from nexusd.models.budget import AnswerStart, process_age\n"
        "start = AnswerStart.process()\n"
        "print(process_age(), start.elapsed(), start.origin)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    age, elapsed, origin = proc.stdout.split(maxsplit=2)
    assert 0.3 <= float(age) < 60.0
    assert 0.3 <= float(elapsed) < 60.0
    assert origin.strip() == "the command started"


@pytest.mark.parametrize(("script", "counts_the_process"), [("nexusd", True), ("runner", False)])
def test_a_command_counts_its_process_only_when_launched_to_run_nexusd(
    tmp_path: Path, script: str, counts_the_process: bool
) -> None:
    """A process started as `nexusd` was started for the answer; a test runner or another
    program that runs the command inside itself was not, and its earlier life is not counted."""
    path = tmp_path / script
    path.write_text(
        "import time\ntime.sleep(0.5)\n"
        "from nexusd.models.budget import AnswerStart\n"
        "start = AnswerStart.command()\nprint(start.elapsed(), start.origin)\n"
    )
    out = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, check=True
    ).stdout.split(maxsplit=1)
    assert (float(out[0]) >= 0.5) is counts_the_process
    assert out[1].strip() == "the command started"
