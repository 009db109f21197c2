"""The top-level `nexusd` command: suggestions for typos, and what a command imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from daemon.helpers import nexusd_env

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


def test_checkpoint_create_imports_nothing_it_does_not_use(repo: Path) -> None:
    # A fresh process, as a user's shell runs it: only what the command itself needs.
    code = (
        "import sys\nfrom nexusd.cli import main\n"
        "try:\n    main(['checkpoint', 'create'])\n"
        "finally:\n    print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo,
        env=nexusd_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("checkpoint ")
    loaded = set(proc.stderr.split())
    heavy = {"json", "torch", "numpy", "lancedb", "pyarrow", "docker", "git", "watchdog"}
    heavy |= {"apscheduler", "frontmatter", "nexusd.planner", "nexusd.memory", "nexusd.code"}
    heavy |= {"nexusd.daemon", "nexusd.sandbox", "nexusd.protocol"}
    # OpenSSL through hashlib (~3 ms): the commit object's SHA-1 comes from CPython's own.
    heavy |= {"hashlib", "_hashlib"}
    assert sorted(heavy & loaded) == []
