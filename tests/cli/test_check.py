"""`nexusd check` through click's CliRunner on a real repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
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
