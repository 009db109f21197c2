"""Service definitions: the systemd user unit (checked by systemd-analyze), the launchd plist."""

from __future__ import annotations

import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nexusd.daemon.unit import (
    render_launchd_plist,
    render_systemd_unit,
    service_spec,
    systemd_unit_path,
)
from nexusd.paths import find_repo


def _sections(text: str) -> dict[str, dict[str, str]]:
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            current[key] = value
    return sections


def test_systemd_unit_runs_the_daemon_in_the_foreground_in_the_repository(repo: Path) -> None:
    spec = service_spec(find_repo(repo))
    unit = _sections(render_systemd_unit(spec))

    assert unit["Service"]["WorkingDirectory"] == str(repo)
    assert unit["Service"]["ExecStart"] == f"{sys.executable} -P -m nexusd start --foreground"
    assert unit["Service"]["RestartPreventExitStatus"] == "7"  # already running: no restart loop
    assert unit["Install"]["WantedBy"] == "default.target"
    assert systemd_unit_path(spec).name == f"{spec.name}.service"


def test_names_differ_per_repository(make_repo: object) -> None:
    assert callable(make_repo)
    first = service_spec(find_repo(make_repo("one")))
    second = service_spec(find_repo(make_repo("two")))
    assert first.name != second.name
    assert first.name.startswith("nexusd-one-")


@pytest.mark.parametrize("dirname", ["plain", "with space", "per%cent"])
def test_unit_passes_systemd_analyze_verify(
    make_repo: object, tmp_path: Path, dirname: str
) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    assert callable(make_repo)
    spec = service_spec(find_repo(make_repo(dirname)))
    unit_file = tmp_path / f"{spec.name}.service"
    unit_file.write_text(render_systemd_unit(spec), encoding="utf-8")

    proc = subprocess.run(
        ["systemd-analyze", "verify", str(unit_file)],
        capture_output=True,
        text=True,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr
    assert unit_file.name not in proc.stderr, proc.stderr  # no warning about our unit


def test_launchd_plist_runs_the_daemon_in_the_foreground(repo: Path) -> None:
    spec = service_spec(find_repo(repo))
    plist = plistlib.loads(render_launchd_plist(spec).encode())

    assert plist["ProgramArguments"] == [
        sys.executable,
        "-P",
        "-m",
        "nexusd",
        "start",
        "--foreground",
    ]
    assert plist["WorkingDirectory"] == str(repo)
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["Label"] == f"dev.{spec.name}"
