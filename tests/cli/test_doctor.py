"""`nexusd doctor` through click's CliRunner, against this machine's real sandboxes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from tests.sandbox.conftest import docker_client  # noqa: F401  (a fixture)


def test_doctor_json_names_the_choice_and_each_capability(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "--json", "-C", str(repo)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    names = {c["name"] for c in data["capabilities"]}
    assert {"docker engine", "bubblewrap", "user namespaces"} <= names
    assert data["backend"] in {"docker", "bwrap", "subprocess"}
    assert data["reason"].startswith("auto:")
    assert data["isolated"] == (data["backend"] != "subprocess")
    for cap in data["capabilities"]:
        assert cap["ok"] or cap["fix"], cap


@pytest.mark.docker
@pytest.mark.usefixtures("docker_client")
def test_doctor_text_with_docker(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "-C", str(repo)])
    assert result.exit_code == 0
    assert "[ok ] docker engine: reachable" in result.output
    assert (
        "checks run on: docker (auto: docker engine reachable and image present)" in result.output
    )


def test_doctor_reports_a_missing_image_with_its_fix(repo: Path) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text("sandbox:\n  image: nexusd-absent:v0\n")
    result = CliRunner().invoke(cli, ["doctor", "-C", str(repo)])
    assert result.exit_code == 0
    assert "[NO ]" in result.output and "fix: " in result.output
    assert "checks run on: docker" not in result.output
