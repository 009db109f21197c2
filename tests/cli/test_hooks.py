"""`nexusd hooks install|status|uninstall` through click."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli


def run(repo: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["hooks", *args, "-C", str(repo)])
    assert result.exit_code == 0, result.output
    return result.output


def test_install_status_uninstall(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "post-merge").write_text("#!/bin/sh\necho mine\n")
    rows = json.loads(run(repo, "install", "--json"))
    assert {r["hook"]: r["state"] for r in rows} == {
        "post-commit": "installed",
        "post-merge": "installed",
        "post-checkout": "installed",
    }
    merge = next(r for r in rows if r["hook"] == "post-merge")
    assert merge["chained"].endswith("post-merge.nexusd-chained")
    text = run(repo, "status")
    assert "hooks directory:" in text and "installed" in text
    run(repo, "uninstall")
    assert (hooks / "post-merge").read_text() == "#!/bin/sh\necho mine\n"
    assert {r["state"] for r in json.loads(run(repo, "status", "--json"))} == {
        "missing",
        "foreign",
    }


@pytest.mark.parametrize(
    "command",
    [
        "hooks",
        "hooks install",
        "hooks uninstall",
        "hooks status",
        "service",
        "service install",
        "service uninstall",
        "doctor",
        "config",
        "config show",
        "stats",
        "token",
        "token create",
        "token list",
        "token revoke",
    ],
)
def test_help_teaches_with_an_example(command: str) -> None:
    result = CliRunner().invoke(cli, [*command.split(), "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output, result.output
    assert f"nexusd {command.split(maxsplit=1)[0]}" in result.output.split("Example", 1)[1]
