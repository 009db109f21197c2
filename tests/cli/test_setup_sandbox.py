"""setup-sandbox.sh ships with the package, and finds its Debian mirror in apt's sources."""

from __future__ import annotations

import ast
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import nexusd
from nexusd.cli import cli

PACKAGE = Path(nexusd.__file__).resolve().parent


def _script() -> Path:
    result = CliRunner().invoke(cli, ["doctor", "--setup-script"], catch_exceptions=False)
    assert result.exit_code == 0
    return Path(result.stdout.strip())


def test_doctor_names_the_script_that_ships_in_the_package() -> None:
    script = _script()
    assert script.is_file()
    assert script.is_relative_to(PACKAGE)  # package data: a pip install has it too
    assert script.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash\n")


def test_no_message_names_a_file_of_nexusd_s_checkout() -> None:
    # `scripts/…` exists only in nexusd's own checkout, never in a user's repository.
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and "scripts/" in text:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def _mirror(apt: Path, **files: str) -> subprocess.CompletedProcess[str]:
    (apt / "sources.list.d").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (apt / name.replace("__", "/")).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "NEXUSD_DEBIAN_MIRROR"}
    env["NEXUSD_APT_DIR"] = str(apt)
    return subprocess.run(
        ["bash", str(_script()), "--print-mirror"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    "files",
    [
        {"sources.list": "deb [signed-by=/k.gpg] http://m.invalid/debian bookworm main\n"},
        {
            "sources.list": "deb-src http://src.invalid/debian bookworm main\n"
            "deb http://sec.invalid/debian-security bookworm-security main\n",
            "sources.list.d__ours.sources": "Types: deb\n"
            "URIs: http://off.invalid/debian\nSuites: bookworm\nEnabled: no\n\n"
            "Types: deb-src deb\n# a comment inside the stanza\n"
            "URIs: http://m.invalid/debian\nSuites: bookworm bookworm-updates\n",
        },
    ],
)
def test_the_mirror_is_apt_s_source_for_the_suite(tmp_path: Path, files: dict[str, str]) -> None:
    proc = _mirror(tmp_path, **files)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "http://m.invalid/debian\n"


def test_no_source_for_the_suite_says_how_to_name_one(tmp_path: Path) -> None:
    proc = _mirror(tmp_path, **{"sources.list": "deb http://u.invalid/ubuntu noble main\n"})
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "NEXUSD_DEBIAN_MIRROR" in proc.stderr


def test_the_script_names_no_package_host() -> None:
    assert re.findall(r"\w+://[\w.-]+", _script().read_text(encoding="utf-8")) == []
