"""The solve loop with a scripted command model: fail, reflect, retry, succeed, crystallize."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from nexusd.config import config_from_mapping
from nexusd.errors import ConfigError, NexusError
from nexusd.models.prompts import prompts_dir
from nexusd.models.reliability import BreakerBoard
from nexusd.models.telemetry import read_events
from nexusd.paths import RepoLayout, find_repo
from nexusd.solve.attempt import sandbox_runner, subprocess_runner
from nexusd.solve.loop import extract_code, solve
from nexusd.solve.review import analyze_error

BUGGY = "def total(xs):\n    return sum(xs)\n\nassert totl([1, 2, 3]) == 6\n"
FIXED = "def total(xs):\n    return sum(xs)\n\n\nassert total([1, 2, 3]) == 6\nprint('ok')\n"

# A model that writes buggy code first and fixes it once the prompt shows the NameError.
MODEL = f"""
import sys
prompt = sys.stdin.read()
code = {FIXED!r} if "NameError" in prompt else {BUGGY!r}
print("Here you go:\\n```python\\n" + code + "```")
"""


@pytest.fixture
def layout(repo: Path) -> RepoLayout:
    return find_repo(repo)


def config_with(tmp_path: Path, script: str, **extra: Any):
    path = tmp_path / "model.py"
    path.write_text(script, encoding="utf-8")
    return config_from_mapping(
        {
            "planner": {"provider": "coder", "max_retries": 0},
            "providers": {
                "coder": {
                    "type": "command",
                    "command": [sys.executable, str(path)],
                    "model": "scripted",
                    "timeout_ms": 20_000,
                }
            },
            "sandbox": {"backend": "subprocess", "timeout": 20},
            # The critic defaults to the coder too; here the rule-based diagnosis is tested.
            "routing": {"critic": {"provider": "offline"}},
            **extra,
        }
    )


def run(layout: RepoLayout, config: Any, **kw: Any):
    return solve(
        layout=layout,
        config=config,
        task="Write total(xs) that sums a list.",
        breakers=BreakerBoard(),
        sleep=lambda s: None,
        **kw,
    )


def test_offline_stops_with_how_to_configure(layout: RepoLayout) -> None:
    with pytest.raises(ConfigError) as info:
        run(layout, config_from_mapping({}))
    assert "needs a language model" in info.value.message
    assert "providers:" in (info.value.hint or "")


def test_fail_reflect_retry_succeed_in_the_sandbox(layout: RepoLayout, tmp_path: Path) -> None:
    config = config_with(tmp_path, MODEL)
    result = run(layout, config, max_retries=3, runner=sandbox_runner(config))
    assert result.success and len(result.attempts) == 2
    first, second = result.attempts
    assert first.result.exit_code == 1 and "NameError" in first.result.stderr
    assert first.reflection and first.reflection.startswith("NameError")
    assert second.result.passed and second.result.stdout.strip() == "ok"
    assert result.final_code == FIXED.rstrip() + "\n"
    assert result.planner == "coder:scripted"
    # The second prompt carried the failed code, its stderr and the diagnosis.
    second_prompt = json.loads(next(prompts_dir(layout).glob("*builder_try2.json")).read_text())
    text = second_prompt["messages"][1]["content"]
    assert "Attempt 1 failed (exit 1)" in text and "totl" in text and "Diagnosis: NameError" in text
    memory = result.memory_text or ""
    assert "after 2 attempt(s)" in memory and "Error met: NameError" in memory
    assert "    return sum(xs)" in memory
    assert result.memory_saved
    assert "Write total(xs) that sums a list." in layout.memory_file.read_text()
    event = read_events(layout)[0][-1]
    assert (event["event"], event["ok"], event["attempts"]) == ("solve", True, 2)


def test_gives_up_after_the_retry_limit(layout: RepoLayout, tmp_path: Path) -> None:
    always_bad = f"print('```python\\n' + {BUGGY!r} + '```')\n"
    result = run(
        layout,
        config_with(tmp_path, always_bad),
        max_retries=2,
        runner=subprocess_runner,
        save=False,
    )
    # The same program three times: run once; the repeats are not run again.
    assert not result.success and len(result.attempts) == 1
    assert sum("already tried" in n for n in result.notes) == 2
    assert result.memory_text is None and result.final_code is None
    assert not layout.memory_file.exists()


def test_a_failing_builder_model_ends_the_loop(layout: RepoLayout, tmp_path: Path) -> None:
    result = run(
        layout, config_with(tmp_path, "import sys\nsys.exit(3)\n"), runner=subprocess_runner
    )
    assert not result.success and result.attempts == ()
    assert "the builder model failed" in result.notes[0] and "exited with 3" in result.notes[0]


def test_the_critic_model_writes_the_diagnosis(layout: RepoLayout, tmp_path: Path) -> None:
    critic = tmp_path / "critic.py"
    critic.write_text("import sys\nsys.stdin.read()\nprint('Rename totl to total (NameError).')\n")
    config = config_with(tmp_path, MODEL)
    providers = dict(config.get("providers"))
    providers["reviewer"] = {"type": "command", "command": [sys.executable, str(critic)]}
    routing = {**config.get("routing"), "critic": {"provider": "reviewer"}}
    config = config_from_mapping({**config.data, "providers": providers, "routing": routing})
    result = run(layout, config, runner=subprocess_runner, save=False)
    assert result.success
    assert result.attempts[0].reflection == "Rename totl to total (NameError)."
    assert result.usage is not None and result.usage.calls == 3


def test_subprocess_runner_timeout() -> None:
    result = subprocess_runner("import time\ntime.sleep(30)\n", "python", 0.5)
    assert result.timed_out and not result.passed and result.exit_code is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("```python\nprint(1)\n```", "print(1)\n"),
        ("Sure.\n```\nprint(2)\n```\nDone.", "print(2)\n"),
        ("```sh\necho hi\n```\n```python\nprint(3)\n```", "print(3)\n"),
        ("print(4)", "print(4)\n"),
    ],
)
def test_extract_code(text: str, code: str) -> None:
    assert extract_code(text, "python") == code


@pytest.mark.parametrize(
    ("stderr", "fragment"),
    [
        (
            "  File \"main.py\", line 4, in <module>\nNameError: name 'totl' is not defined",
            "NameError at line 4: name 'totl' is not defined — define or import",
        ),
        (
            "  File \"main.py\", line 1\n    def f(\n         ^\nSyntaxError: '(' was never closed",
            "SyntaxError at line 1",
        ),
        ("Traceback...\nAssertionError", "AssertionError: (no message) — the result is wrong"),
        ("segfault somewhere", "exited with 139; last stderr line: segfault somewhere"),
    ],
)
def test_analyze_error(stderr: str, fragment: str) -> None:
    assert fragment in analyze_error(stderr, 139 if "segfault" in stderr else 1)


def test_analyze_timeout() -> None:
    assert "time limit" in analyze_error("", None, timed_out=True)


def test_an_empty_task_is_refused_before_the_model_is_asked(
    layout: RepoLayout, tmp_path: Path
) -> None:
    # Whatever the model wrote for no task would "pass" and be saved as a solution.
    config = config_with(tmp_path, "print('```python\\nprint(1)\\n```')\n")
    with pytest.raises(NexusError, match="the task is empty"):
        solve(layout=layout, config=config, task=" \n ", runner=subprocess_runner)
    assert not (layout.root / "MEMORY.md").exists()
    assert not prompts_dir(layout).exists()


def test_a_long_task_keeps_its_start_and_end_within_the_prompt_budget(
    layout: RepoLayout, tmp_path: Path
) -> None:
    seen = tmp_path / "prompt.txt"
    script = (
        f"import sys\nopen({str(seen)!r}, 'w').write(sys.stdin.read())\n"
        "print('```python\\nprint(1)\\n```')\n"
    )
    config = config_with(
        tmp_path, script, planner={"provider": "coder", "max_context_tokens": 1000}
    )
    pasted = "\n".join(f"row {i}: 3,4,5" for i in range(20_000))  # about 60 000 tokens
    task = f"Sum the third column of this CSV.\n{pasted}\nThe answer must be 100000."
    result = solve(layout=layout, config=config, task=task, runner=subprocess_runner, save=False)
    assert result.success
    prompt = seen.read_text()
    assert len(prompt) < 1000 * 4 * 2  # the whole task was 280 000 characters
    assert "Sum the third column" in prompt and "The answer must be 100000." in prompt
    assert "characters left out here" in prompt
    assert any("characters of its middle were left out" in note for note in result.notes)
