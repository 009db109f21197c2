"""Retries that learn: each retry changes something (a note in the prompt, the sampling
temperature), the same program is never run twice, a prompt echoed back is no answer,
a timed-out call is retried, and a failed solve records what it learned."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from nexusd.config import config_from_mapping
from nexusd.models.echo import echoes_prompt
from nexusd.models.prompts import prompts_dir
from nexusd.models.registry import Message
from nexusd.models.reliability import BreakerBoard
from nexusd.paths import RepoLayout, find_repo
from nexusd.solve.attempt import subprocess_runner
from nexusd.solve.loop import solve

BUGGY = "def total(xs):\n    return sum(xs)\n\nassert totl([1, 2, 3]) == 6\n"
WRONG = "def total(xs):\n    return 0\n\nassert total([1, 2, 3]) == 6, 'wrong sum'\n"
FIXED = "def total(xs):\n    return sum(xs)\n\n\nassert total([1, 2, 3]) == 6\nprint('ok')\n"


@pytest.fixture
def layout(repo: Path) -> RepoLayout:
    return find_repo(repo)


def scripted(tmp_path: Path, body: str, timeout_ms: int = 20_000) -> Any:
    """A command model: `body` runs with `prompt`, `n` (this call's number) and `log`."""
    script = tmp_path / "model.py"
    log = tmp_path / "calls.jsonl"
    script.write_text(
        "import json, os, sys, time\n"
        "prompt = sys.stdin.read()\n"
        f"log = {str(log)!r}\n"
        "n = sum(1 for _ in open(log)) + 1 if os.path.exists(log) else 1\n"
        "with open(log, 'a') as fh:\n"
        "    fh.write(json.dumps({'t': os.environ['NEXUSD_TEMPERATURE']}) + '\\n')\n" + body
    )
    return config_from_mapping(
        {
            "planner": {"provider": "coder", "max_retries": 2, "timeout_ms": 2000},
            "providers": {
                "coder": {
                    "type": "command",
                    "command": [sys.executable, str(script)],
                    "model": "scripted",
                    "timeout_ms": timeout_ms,
                }
            },
            "routing": {"critic": {"provider": "offline"}},
        }
    )


def calls(tmp_path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def run(layout: RepoLayout, config: Any, **kw: Any) -> Any:
    kw.setdefault("save", False)
    return solve(
        layout=layout,
        config=config,
        task="Write total(xs) that sums a list.",
        runner=subprocess_runner,
        breakers=BreakerBoard(),
        sleep=lambda s: None,
        **kw,
    )


def fenced(code: str) -> str:
    return f"print('```python\\n' + {code!r} + '```')\n"


def test_a_timed_out_call_is_retried_with_a_change(layout: RepoLayout, tmp_path: Path) -> None:
    # The first call outlives planner.timeout_ms (2 s); the second answers.
    body = "if n == 1:\n    time.sleep(30)\n" + fenced(FIXED)
    result = run(layout, scripted(tmp_path, body), max_retries=2)
    assert result.success and [a.number for a in result.attempts] == [2]
    assert "try 1: the builder model failed" in result.notes[0]
    second = json.loads(next(prompts_dir(layout).glob("*builder_try2.json")).read_text())
    assert "did not arrive in time" in second["messages"][1]["content"]
    first_t, second_t = (float(c["t"]) for c in calls(tmp_path))
    assert second_t > first_t


def test_the_same_program_is_not_run_twice(layout: RepoLayout, tmp_path: Path) -> None:
    body = f"code = {FIXED!r} if n >= 3 else {BUGGY!r}\n" + "print('```python\\n' + code + '```')\n"
    result = run(layout, scripted(tmp_path, body), max_retries=3)
    assert result.success
    # Try 1 ran BUGGY, try 2 wrote it again (not run), try 3 wrote the fix.
    assert [a.number for a in result.attempts] == [1, 3]
    assert any("try 2: the model wrote a program it had already tried" in n for n in result.notes)
    third = json.loads(next(prompts_dir(layout).glob("*builder_try3.json")).read_text())
    assert "already failed: write a different one" in third["messages"][1]["content"]
    temperatures = [float(c["t"]) for c in calls(tmp_path)]
    assert temperatures == sorted(set(temperatures))  # every retry samples differently


def test_an_echoed_prompt_is_no_answer(layout: RepoLayout, tmp_path: Path) -> None:
    body = "if n == 1:\n    print(prompt)\nelse:\n" + "    " + fenced(FIXED)
    result = run(layout, scripted(tmp_path, body), max_retries=1)
    assert result.success and [a.number for a in result.attempts] == [2]
    assert "repeated the prompt" in result.notes[0]
    second = json.loads(next(prompts_dir(layout).glob("*builder_try2.json")).read_text())
    assert "only repeated the prompt" in second["messages"][1]["content"]


def test_a_failed_solve_records_what_it_learned(layout: RepoLayout, tmp_path: Path) -> None:
    body = f"code = {BUGGY!r} if n == 1 else {WRONG!r}\n" + "print('```python\\n' + code + '```')\n"
    result = run(layout, scripted(tmp_path, body), max_retries=2, save=True)
    assert not result.success and len(result.attempts) == 2  # try 3 repeated WRONG: not run
    memory = layout.memory_file.read_text()
    assert "Not solved:" in memory and "Write total(xs) that sums a list." in memory
    assert "Failed: NameError" in memory and "Failed: AssertionError" in memory
    # The last prompt listed every distinct failure met so far.
    third = json.loads(next(prompts_dir(layout).glob("*builder_try3.json")).read_text())
    assert "# What failed so far" in third["messages"][1]["content"]


@pytest.mark.parametrize(
    ("answer", "echo"),
    [
        ("Write total(xs) that sums a list, please, in Python.", True),  # the request again
        ("You write one complete, runnable python program that solves the task.", True),
        ("```python\nprint(sum([1, 2]))\n```", False),
        ("ok", False),
        ("The NameError comes from `totl`: rename it to `total`.", False),
    ],
)
def test_echo_detection(answer: str, echo: bool) -> None:
    messages = (
        Message("system", "You write one complete, runnable python program that solves the task."),
        Message("user", "Write total(xs) that sums a list, please, in Python. It must pass."),
    )
    assert echoes_prompt(answer, messages) is echo
