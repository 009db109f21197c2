"""`nexusd check` through click's CliRunner on a real repository."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.processes import pid_alive
from tests.conftest import git

CONFIG = """\
sandbox:
  backend: {backend}
checks:
  - name: ok
    run: python3 -c "print('all good')"
  - name: broken
    run: python3 -c "import definitely_missing_mod"
    when: manual
"""


@pytest.fixture
def configured(repo: Path) -> Path:
    """The repo with two checks on the unisolated backend (available everywhere)."""
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(CONFIG.format(backend="subprocess"))
    return repo


def test_check_prints_reflections_and_fails_when_a_check_fails(configured: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "-C", str(configured)])
    assert result.exit_code == 1
    assert "**`ok` passed**" in result.output
    assert "No module named 'definitely_missing_mod'" in result.output
    assert "**Next diagnostic step:**" in result.output
    assert "NOT ISOLATED" in result.output


def test_check_json_for_named_checks(configured: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "ok", "--json", "-C", str(configured)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    assert data["status"] == "passed"
    assert [r["name"] for r in data["results"]] == ["ok"]
    assert data["results"][0]["stdout_head"] == "all good\n"
    assert data["results"][0]["isolated"] is False


def test_unknown_check_is_a_config_error(configured: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "nope", "-C", str(configured)])
    assert result.exit_code == 3
    assert "no check named nope" in result.output


def test_no_checks_configured(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "-C", str(repo)])
    assert result.exit_code == 0
    assert "no checks configured" in result.output


def test_checkpoint_runs_that_snapshot_and_attaches_a_note(configured: Path) -> None:
    from nexusd.checkpoint.notes import read_note
    from nexusd.checkpoint.snapshot import create_checkpoint
    from nexusd.paths import find_repo

    layout = find_repo(configured)
    cp = create_checkpoint(layout, reason="manual")
    (configured / ".nexus" / "config.yaml").write_text(CONFIG.format(backend="subprocess"))
    result = CliRunner().invoke(cli, ["check", "ok", "--checkpoint", cp.id, "-C", str(configured)])
    assert result.exit_code == 0, result.output
    note = read_note(layout, cp.commit)
    assert note["checks"]["status"] == "passed"
    assert note["checks"]["results"]["ok"]["exit_code"] == 0
    assert git(configured, "notes", "--ref=refs/notes/nexus", "list").strip()


def _wait_for(path: Path, seconds: float = 20.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_check_leaves_no_process_or_workspace_behind(
    repo: Path, tmp_path: Path, signum: int, code: int
) -> None:
    # The subprocess backend has no pid namespace: only nexusd can end the check's group.
    marks = tmp_path / "marks"
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        "sandbox:\n  backend: subprocess\nchecks:\n  - name: hang\n"
        f'    run: echo "$$ $(pwd)" > {marks}; exec sleep 300\n'
    )
    # As a shell starts a foreground job: SIGINT raises KeyboardInterrupt, also when this
    # test runs in a background job that ignores it.
    start = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
        "from nexusd.cli import main; main(sys.argv[1:])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", start, "check", "-C", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    pid, workspace = _wait_for(marks).split(maxsplit=1)
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    deadline = time.monotonic() + 5
    while pid_alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(int(pid)), "the check outlived nexusd check"
    assert not Path(workspace.strip()).exists()
    if signum == signal.SIGINT:
        assert b"interrupted" in err


def test_a_check_the_sandbox_could_not_run_exits_6_with_the_fix(
    repo: Path, tmp_path: Path, bwrap_usable: None
) -> None:
    # Not 1: the code did not fail, it never ran; the fix is in the sandbox's settings.
    locked = tmp_path / "locked"
    (locked / "venv").mkdir(parents=True)
    locked.chmod(0o000)
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        f"sandbox:\n  backend: bwrap\n  ro_binds: [{locked / 'venv'}]\n"
        "checks:\n  - name: unit\n    run: echo ran\n"
    )
    try:
        result = CliRunner().invoke(cli, ["check", "-C", str(repo)])
    finally:
        locked.chmod(0o755)
    assert result.exit_code == 6, result.output
    assert "**`unit` error**" in result.output and "did not run" in result.output
    assert "sandbox.ro_binds" in result.output  # the fix, not "run nexusd doctor"
