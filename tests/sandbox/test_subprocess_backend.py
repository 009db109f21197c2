"""The subprocess backend runs checks as the user running nexusd, with the user's own tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.sandbox import subprocess_backend
from nexusd.sandbox.runner import run_checks

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="the lost-tools case (a 0700 home) arises only when run as root"
)


def _private_tool(tmp_path: Path) -> Path:
    """An executable in a folder only its owner can enter, like a virtualenv under /root."""
    home = tmp_path / "private-home"
    (home / "venv" / "bin").mkdir(parents=True)
    home.chmod(0o700)
    tool = home / "venv" / "bin" / "pytest"
    tool.write_text("#!/bin/sh\necho TOOL RAN as $(id -u)\n", encoding="utf-8")
    tool.chmod(0o755)
    return tool


@needs_root
def test_a_tool_under_a_private_home_runs(tmp_path: Path, make_spec, probe_tar) -> None:
    # A tool inside a 0700 home must run as the caller: dropping to `nobody` cannot enter
    # the home, and the check failed with exit 126 "Permission denied".
    tool = _private_tool(tmp_path)
    result = subprocess_backend.run(make_spec(str(tool)), probe_tar)
    assert result.status == "passed", result.stderr
    assert result.stdout.strip() == "TOOL RAN as 0"


@needs_root
def test_a_root_run_says_what_root_loses(make_spec, probe_tar) -> None:
    result = subprocess_backend.run(make_spec("true"), probe_tar)
    assert any("NOT ISOLATED" in w for w in result.warnings)
    assert any("ran as root" in w and "pids" in w for w in result.warnings), result.warnings


def test_the_check_runs_as_the_invoking_user(make_spec, probe_tar) -> None:
    result = subprocess_backend.run(make_spec("id -u; touch made-here && echo WROTE"), probe_tar)
    assert result.status == "passed", result.stderr
    assert result.stdout.split() == [str(os.geteuid()), "WROTE"]


@needs_root
def test_nexusd_check_runs_a_private_tool_end_to_end(tmp_path: Path, repo: Path) -> None:
    from nexusd.config import load_config
    from nexusd.paths import find_repo

    tool = _private_tool(tmp_path)
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        f"sandbox:\n  backend: subprocess\nchecks:\n  - name: tests\n    run: {tool}\n",
        encoding="utf-8",
    )
    (result,) = run_checks(find_repo(repo), load_config(repo))
    assert (result.status, result.exit_code) == ("passed", 0), result.stderr
