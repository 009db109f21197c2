"""Exit codes: one table, the same in `nexusd --help`, README and the error classes.

Each code's own situation is tested where it arises (a failed check in test_check, an
already running daemon in test_daemon, a bad configuration key in test_check …); here:
the table agrees everywhere, usage and refusal codes, and a bug's code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd import errors
from nexusd.cli import EXIT_CODES_HELP, cli
from tests.daemon.helpers import nexusd_env

README = Path(__file__).resolve().parents[2] / "README.md"


def _help_codes() -> set[int]:
    return {int(m) for m in re.findall(r"(?m)^\s+(\d+)\s+\S", EXIT_CODES_HELP)}


def _readme_codes() -> set[int]:
    section = README.read_text(encoding="utf-8").split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m) for m in re.findall(r"(?m)^\| (\d+) \|", section)}


def test_help_readme_and_error_classes_list_the_same_codes() -> None:
    classes = {
        cls.exit_code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.NexusError)
    }
    fixed = {0, errors.EXIT_FAILED, errors.EXIT_USAGE, errors.EXIT_BUG}
    assert _help_codes() == _readme_codes() == classes | fixed
    assert len(classes) == len(
        [
            c
            for c in vars(errors).values()
            if isinstance(c, type) and issubclass(c, errors.NexusError)
        ]
    ), "two error classes share an exit code"


def test_the_help_shows_the_table() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "70 unexpected error" in " ".join(result.output.split())


def test_bad_usage_is_2() -> None:
    result = CliRunner().invoke(cli, ["plan", "--no-such-option"])
    assert result.exit_code == errors.EXIT_USAGE == 2


def test_a_refusal_is_10_and_says_what_to_fix(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["plan", str(tmp_path / "absent_plan_request.md")])
    assert result.exit_code == errors.NexusError.exit_code == 10
    assert "does not exist" in result.output and "fix:" in result.output


@pytest.mark.parametrize(
    ("args", "kind", "code"),
    [
        (["code", "status", "--json"], "GitError", 5),  # not a repository
        (["code", "search", "x", "-k", "0", "--json"], "UsageError", 2),
        (["memory", "search", "x", "--json", "--limit", "nope"], "UsageError", 2),
    ],
)
def test_with_json_an_error_is_also_a_json_object_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], kind: str, code: int
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == code
    error = json.loads(result.stdout)["error"]
    assert (error["kind"], error["exit_code"]) == (kind, code)
    assert error["message"] and error["message"] in result.stderr  # people still read stderr
    if kind == "GitError":
        assert error["hint"] == "cd into your repository, or run `git init` here first"


def test_without_json_or_after_a_double_dash_errors_are_text_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["plan", str(tmp_path / "absent_plan_request.md")])
    assert result.exit_code == 10 and result.stdout == ""
    result = CliRunner().invoke(cli, ["plan", "--", "--json"])  # a file named `--json`
    assert result.exit_code == 4 and result.stdout == ""
    assert "--json is not named like a plan request" in result.stderr


BUG = """
import sys
import click
from nexusd.cli import COMMANDS, main

@click.command("boom")
@click.option("--json", "as_json", is_flag=True)
def boom(as_json: bool) -> None:
    raise RuntimeError("a bug")

COMMANDS["boom"] = ("__main__", "boom", "a command with a bug")
main(["boom", *sys.argv[1:]])
"""


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_an_unexpected_error_is_70_with_its_traceback(tmp_path: Path, as_json: bool) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BUG, *(["--json"] if as_json else [])],
        cwd=tmp_path,
        env=nexusd_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == errors.EXIT_BUG == 70, proc.stderr
    assert "RuntimeError: a bug" in proc.stderr  # the traceback, for the report
    assert "a bug in nexusd" in proc.stderr
    if as_json:
        assert json.loads(proc.stdout)["error"]["exit_code"] == 70
    else:
        assert proc.stdout == ""
