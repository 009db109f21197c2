"""Service-manager definitions that run `nexusd start --foreground` for one repository.

A systemd user unit on Linux (`~/.config/systemd/user/nexusd-<name>-<hash>.service`),
a launchd agent on macOS (`~/Library/LaunchAgents/dev.nexusd.<name>-<hash>.plist`).
Pure renderers plus the paths where they are installed.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from nexusd.paths import RepoLayout

ALREADY_RUNNING_EXIT = 7  # DaemonError: do not restart into a lock held by another daemon


@dataclass(frozen=True)
class ServiceSpec:
    """What a service manager needs to run this repository's daemon."""

    name: str  # `nexusd-<dir>-<hash8>`: unique per repository path
    root: Path
    argv: tuple[str, ...]
    out_file: Path


def service_spec(layout: RepoLayout, python: str | None = None) -> ServiceSpec:
    """The service for `layout`, running this interpreter's nexusd."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", layout.root.name).strip("-.") or "repo"
    digest = hashlib.sha256(str(layout.root).encode("utf-8")).hexdigest()[:8]
    argv = (python or sys.executable, "-P", "-m", "nexusd", "start", "--foreground")
    return ServiceSpec(
        name=f"nexusd-{slug}-{digest}",
        root=layout.root,
        argv=argv,
        out_file=layout.logs_dir / "daemon.out",
    )


def _systemd_quote(arg: str) -> str:
    escaped = arg.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"' if re.search(r"[\s\"';$]", arg) or not arg else escaped


def render_systemd_unit(spec: ServiceSpec) -> str:
    """The systemd user unit text."""
    exec_start = " ".join(_systemd_quote(a) for a in spec.argv)
    workdir = str(spec.root).replace("%", "%%")
    return f"""\
# Written by `nexusd service install`; remove with `nexusd service uninstall`.
[Unit]
Description=nexusd plan daemon for {workdir}

[Service]
Type=simple
WorkingDirectory={workdir}
ExecStart={exec_start}
Environment=PYTHONUNBUFFERED=1
Restart=on-failure
RestartSec=2
RestartPreventExitStatus={ALREADY_RUNNING_EXIT}
KillSignal=SIGTERM
TimeoutStopSec=60

[Install]
WantedBy=default.target
"""


def render_launchd_plist(spec: ServiceSpec) -> str:
    """The launchd agent property list."""
    data = {
        "Label": f"dev.{spec.name}",
        "ProgramArguments": list(spec.argv),
        "WorkingDirectory": str(spec.root),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(spec.out_file),
        "StandardErrorPath": str(spec.out_file),
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
    }
    return plistlib.dumps(data).decode("utf-8")


def systemd_unit_path(spec: ServiceSpec) -> Path:
    """`$XDG_CONFIG_HOME/systemd/user/<name>.service`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user" / f"{spec.name}.service"


def launchd_plist_path(spec: ServiceSpec) -> Path:
    """`~/Library/LaunchAgents/dev.<name>.plist`."""
    return Path.home() / "Library" / "LaunchAgents" / f"dev.{spec.name}.plist"
