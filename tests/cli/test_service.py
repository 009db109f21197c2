"""`nexusd service install|uninstall` in an isolated home."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli.service import service


def _unit_dir() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user"


def test_install_writes_a_verified_unit_and_uninstall_removes_it(repo: Path) -> None:
    runner = CliRunner()

    installed = runner.invoke(service, ["install", "--kind", "systemd", "-C", str(repo)])

    assert installed.exit_code == 0, installed.output
    units = list(_unit_dir().glob("nexusd-repo-*.service"))
    assert len(units) == 1
    text = units[0].read_text(encoding="utf-8")
    assert f"WorkingDirectory={repo}\n" in text
    # -P: the served repository is not on the import path (a top-level yaml.py cannot shadow ours)
    assert f"ExecStart={sys.executable} -P -m nexusd start --foreground\n" in text
    assert "systemctl --user enable --now" in installed.output
    if shutil.which("systemd-analyze"):
        verify = subprocess.run(
            ["systemd-analyze", "verify", str(units[0])],
            capture_output=True,
            text=True,
            check=False,
        )
        assert verify.returncode == 0, verify.stderr
        assert units[0].name not in verify.stderr

    again = runner.invoke(service, ["install", "--kind", "systemd", "-C", str(repo)])
    assert again.exit_code == 0
    assert len(list(_unit_dir().glob("nexusd-repo-*.service"))) == 1  # idempotent

    removed = runner.invoke(service, ["uninstall", "--kind", "systemd", "-C", str(repo)])
    assert removed.exit_code == 0, removed.output
    assert f"removed {units[0]}" in removed.output
    assert not units[0].exists()
    twice = runner.invoke(service, ["uninstall", "--kind", "systemd", "-C", str(repo)])
    assert "no service installed" in twice.output


def test_print_writes_nothing(repo: Path) -> None:
    result = CliRunner().invoke(
        service, ["install", "--print", "--kind", "systemd", "-C", str(repo)]
    )

    assert result.exit_code == 0
    assert result.output.startswith("# Written by `nexusd service install`")
    assert not _unit_dir().exists()


def test_launchd_agent(repo: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(service, ["install", "--kind", "launchd", "-C", str(repo)])

    assert result.exit_code == 0, result.output
    (plist_file,) = (Path(os.environ["HOME"]) / "Library" / "LaunchAgents").glob("dev.nexusd-*")
    plist = plistlib.loads(plist_file.read_bytes())
    assert plist["WorkingDirectory"] == str(repo)
    assert plist["ProgramArguments"][-2:] == ["start", "--foreground"]
    assert (
        runner.invoke(service, ["uninstall", "--kind", "launchd", "-C", str(repo)]).exit_code == 0
    )
    assert not plist_file.exists()


def test_install_outside_a_repository_fails_clearly(tmp_path: Path) -> None:
    result = CliRunner().invoke(service, ["install", "-C", str(tmp_path)])
    assert result.exit_code != 0
    assert isinstance(result.exception, Exception)
    assert "not inside a git repository" in str(result.exception)


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="systemctl is not installed")
def test_install_now_without_a_user_manager_explains(repo: Path) -> None:
    result = CliRunner().invoke(service, ["install", "--now", "--kind", "systemd", "-C", str(repo)])
    if result.exit_code == 0:
        pytest.skip("a systemd user manager runs here; not enabling a unit in a test")
    assert "the definition is written" in str(result.exception)
    assert list(_unit_dir().glob("nexusd-repo-*.service"))


def test_a_unit_folder_that_cannot_be_made_is_an_error_with_a_fix(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Used to end with a NotADirectoryError traceback (exit 70).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", "service", "install", "--kind", "systemd"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 10, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"cannot write {blocker}/systemd/user/" in proc.stderr and "--print" in proc.stderr
