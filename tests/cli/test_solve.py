"""`nexusd solve` in a real repository with a scripted command model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from nexusd.cli import cli

BUGGY = "def double(x):\n    return x * 2\n\n\nassert doubel(2) == 4\n"
FIXED = "def double(x):\n    return x * 2\n\n\nassert double(2) == 4\nprint('works')\n"
MODEL = f"""
import sys
prompt = sys.stdin.read()
code = {FIXED!r} if "NameError" in prompt else {BUGGY!r}
print("```python\\n" + code + "```")
"""


def configure(repo: Path, script: str) -> None:
    model = repo.parent / "model.py"
    model.write_text(script, encoding="utf-8")
    config = {
        "planner": {"provider": "coder"},
        "providers": {
            "coder": {
                "type": "command",
                "command": [sys.executable, str(model)],
                "model": "scripted",
            }
        },
        "routing": {"critic": {"provider": "offline"}},
        "sandbox": {"backend": "subprocess", "timeout": 20},
    }
    (repo / ".nexus").mkdir(exist_ok=True)
    (repo / ".nexus" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def invoke(*args: str):
    return CliRunner().invoke(cli, ["solve", *args], catch_exceptions=False)


def test_offline_says_how_to_configure_a_provider(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", "solve", "add two numbers", "-C", str(repo)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 3
    assert "error: nexusd solve needs a language model" in proc.stderr
    assert "providers:" in proc.stderr and "planner:" in proc.stderr


def test_solves_after_one_reflection(repo: Path) -> None:
    configure(repo, MODEL)
    result = invoke("Write double(x).", "-C", str(repo), "--max-retries", "3")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("attempt 1: failed (exit 1) — NameError")
    assert lines[1] == "attempt 2: passed"
    assert "after 2 attempt(s)" in result.stdout and "assert double(2) == 4" in result.stdout
    assert "Write double(x)." in (repo / "MEMORY.md").read_text()


def test_json_and_failure_exit_code(repo: Path) -> None:
    configure(repo, f"print('```python\\n' + {BUGGY!r} + '```')\n")
    result = invoke(
        "Write double(x).", "-C", str(repo), "--max-retries", "1", "--json", "--no-memory"
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    # The model wrote the same program twice: it ran once (the same code is not run twice).
    assert data["success"] is False and len(data["attempts"]) == 1
    assert any("already tried" in n for n in data["notes"])
    assert data["attempts"][0]["exit_code"] == 1 and "NameError" in data["attempts"][0]["stderr"]
    assert data["planner"] == "coder:scripted"
    assert not (repo / "MEMORY.md").exists()


def test_unknown_language(repo: Path) -> None:
    configure(repo, MODEL)
    result = CliRunner().invoke(cli, ["solve", "x", "-C", str(repo), "--lang", "cobol"])
    assert result.exit_code == 3
    assert "`cobol` is not a language" in result.stderr


def test_an_empty_task_is_bad_usage_before_any_model_is_asked(repo: Path) -> None:
    # The model would answer anything (a passing program): nothing must run or be saved.
    configure(repo, "print('```python\\nprint(1)\\n```')\n")
    for task in ("", "  \n\t"):
        result = CliRunner().invoke(cli, ["solve", task, "-C", str(repo)])
        assert result.exit_code == 2, result.output
        assert "TASK is empty" in result.stderr
    assert not (repo / "MEMORY.md").exists()
