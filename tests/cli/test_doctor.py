"""`nexusd doctor` through click's CliRunner, against this machine's real sandboxes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from tests.sandbox.conftest import docker_client  # noqa: F401  (a fixture)


def _bwrap_runs() -> bool:
    """Judged apart from nexusd's probe: can bwrap build a sandbox on this machine?"""
    if shutil.which("bwrap") is None:
        return False
    cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "true"]
    return subprocess.run(cmd, capture_output=True, timeout=30, check=False).returncode == 0


@pytest.mark.docker
@pytest.mark.usefixtures("docker_client")
def test_doctor_json_reports_this_machines_real_capabilities(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "--json", "-C", str(repo)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    caps = {c["name"]: c for c in data["capabilities"]}
    # The engine answers (the fixture pinged it) and the test image is there.
    assert caps["docker engine"]["ok"] is True, caps["docker engine"]
    assert caps["bubblewrap"]["ok"] is _bwrap_runs(), caps["bubblewrap"]
    userns = Path("/proc/sys/user/max_user_namespaces").read_text().strip()
    assert caps["user namespaces"]["ok"] is (userns != "0")
    assert (data["backend"], data["isolated"]) == ("docker", True)
    assert data["reason"] == "auto: docker engine reachable and image present"
    for cap in caps.values():
        assert cap["ok"] == (cap["fix"] == ""), cap  # a fix exactly when something is missing


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


def test_doctor_outside_a_repository_checks_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Used to refuse with "not inside a git repository" (exit 5) on a fresh machine.
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    assert "not in a git repository" in result.stderr
    data = json.loads(result.stdout)
    assert data["configured"] == "auto" and {c["name"] for c in data["capabilities"]} >= {
        "bubblewrap",
        "user namespaces",
    }
    explicit = CliRunner().invoke(cli, ["doctor", "-C", str(tmp_path)])
    assert explicit.exit_code == 5  # a folder named on purpose must be a repository
