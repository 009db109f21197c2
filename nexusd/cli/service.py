"""`nexusd service install|uninstall`: run this repository's daemon as a user service."""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import click

from nexusd.cli._common import open_repo, repo_option
from nexusd.cli._group import group

KINDS = ("auto", "systemd", "launchd")


def _kind(kind: str) -> str:
    if kind != "auto":
        return kind
    return "launchd" if platform.system() == "Darwin" else "systemd"


def _run(*argv: str) -> tuple[bool, str]:
    """Run a service-manager command; (succeeded, its output) — absent tools just fail."""
    if shutil.which(argv[0]) is None:
        return False, f"{argv[0]} not found"
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    return proc.returncode == 0, (proc.stderr or proc.stdout).strip()


kind_option = click.option(
    "--kind",
    type=click.Choice(KINDS),
    default="auto",
    show_default=True,
    help="systemd user unit, or launchd agent (auto: launchd on macOS).",
)


@group()
def service() -> None:
    """Install the daemon as a user service (systemd user unit; launchd agent on macOS).

    The service runs `nexusd start --foreground` with the repository as its
    working directory, restarts it if it crashes, and stops it with SIGTERM.
    One service per repository (or worktree); its name comes from the path.

    \b
    Examples:
      nexusd service install --print       # see the unit; nothing is written
      nexusd service install --now         # write it, enable and start it
      nexusd service uninstall             # stop, disable and remove it
    """


@service.command()
@repo_option
@kind_option
@click.option("--now", "enable_now", is_flag=True, help="Also enable and start it right away.")
@click.option("--print", "print_only", is_flag=True, help="Print the definition, write nothing.")
def install(repo: Path | None, kind: str, enable_now: bool, print_only: bool) -> None:
    """Write the service definition for this repository (and print how to enable it).

    \b
    systemd: $XDG_CONFIG_HOME/systemd/user/nexusd-<name>-<hash>.service (~/.config)
    launchd: ~/Library/LaunchAgents/dev.nexusd-<name>-<hash>.plist

    \b
    Examples:
      nexusd service install --print
      nexusd service install --now
    """
    layout, _ = open_repo(repo)
    from nexusd.atomic import atomic_write_text
    from nexusd.daemon import unit

    spec = unit.service_spec(layout)
    chosen = _kind(kind)
    if chosen == "systemd":
        text, path = unit.render_systemd_unit(spec), unit.systemd_unit_path(spec)
        enable = [
            ("systemctl", "--user", "daemon-reload"),
            ("systemctl", "--user", "enable", "--now", f"{spec.name}.service"),
        ]
    else:
        text, path = unit.render_launchd_plist(spec), unit.launchd_plist_path(spec)
        enable = [("launchctl", "load", "-w", str(path))]
    if print_only:
        click.echo(text, nl=False)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    except OSError as exc:
        from nexusd.errors import NexusError

        raise NexusError(
            f"cannot write {path}: {exc.strerror or exc}",
            hint="make that folder writable (for systemd it is under $XDG_CONFIG_HOME, by"
            " default ~/.config), or use --print and install the definition by hand",
        ) from exc
    click.echo(f"wrote {path}")
    if not enable_now:
        click.echo("enable it with:\n  " + "\n  ".join(" ".join(cmd) for cmd in enable))
        return
    for cmd in enable:
        ok, output = _run(*cmd)
        if not ok:
            from nexusd.errors import DaemonError

            raise DaemonError(
                f"`{' '.join(cmd)}` failed: {output}",
                hint="the definition is written; enable it by hand when the service manager runs",
            )
    click.echo(f"enabled and started {spec.name}")


@service.command()
@repo_option
@kind_option
def uninstall(repo: Path | None, kind: str) -> None:
    """Stop and disable the service if the manager runs, then remove its definition.

    \b
    Example:
      nexusd service uninstall -C ~/src/your-repo
    """
    layout, _ = open_repo(repo)
    from nexusd.daemon import unit

    spec = unit.service_spec(layout)
    if _kind(kind) == "systemd":
        path = unit.systemd_unit_path(spec)
        _run("systemctl", "--user", "disable", "--now", f"{spec.name}.service")
    else:
        path = unit.launchd_plist_path(spec)
        _run("launchctl", "unload", "-w", str(path))
    if not path.exists():
        click.echo(f"no service installed ({path} does not exist)")
        return
    try:
        path.unlink()
    except OSError as exc:
        from nexusd.errors import NexusError

        raise NexusError(
            f"cannot remove {path}: {exc.strerror or exc}", hint="remove it by hand"
        ) from exc
    if _kind(kind) == "systemd":
        _run("systemctl", "--user", "daemon-reload")
    click.echo(f"removed {path}")
