"""The top-level `nexusd` command: suggestions for typos, and what a command imports."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("typed", "wrong", "meant"),
    [
        (["strat"], "strat", "start"),
        (["requst", "new"], "requst", "request"),
        (["mem"], "mem", "memory"),
        (["checkpoint", "re", "x"], "re", "restore"),  # a prefix, too short for difflib
        (["hooks", "instal"], "instal", "install"),
        (["config", "shw"], "shw", "show"),
    ],
)
def test_a_mistyped_command_gets_a_suggestion(
    repo: Path, monkeypatch: pytest.MonkeyPatch, typed: list[str], wrong: str, meant: str
) -> None:
    monkeypatch.chdir(repo)
    code, err = _run(*typed)
    assert code == 2
    assert f"No such command '{wrong}'. Did you mean" in err, err
    assert f"'{meant}'" in err, err


def test_nothing_close_gets_no_guess(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    code, err = _run("xyzzy")
    assert code == 2
    assert "No such command 'xyzzy'." in err
    assert "Did you mean" not in err


@pytest.mark.parametrize(
    ("typed", "meant"),
    [(["--verison"], "'--version'"), (["status", "--jsn"], "'--json'")],
)
def test_a_mistyped_option_gets_a_suggestion(
    repo: Path, monkeypatch: pytest.MonkeyPatch, typed: list[str], meant: str
) -> None:
    monkeypatch.chdir(repo)
    code, err = _run(*typed)
    assert code == 2
    assert "Did you mean" in err and meant in err, err
