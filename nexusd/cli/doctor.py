"""`nexusd doctor`: which sandbox isolation this machine offers, and how to get better."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._style import label, paint
from nexusd.config import Config, load_config

# Package data beside this module (pyproject.toml), so a pip install has it too.
SETUP_SCRIPT = Path(__file__).resolve().with_name("setup-sandbox.sh")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--setup-script",
    is_flag=True,
    help="Print the path of setup-sandbox.sh, which ships with nexusd, and exit.",
)
@repo_option
def doctor(as_json: bool, setup_script: bool, repo: Path | None) -> None:
    """Check the Docker Engine, the images, bubblewrap and user namespaces.

    \b
    Prints what `sandbox.backend: auto` picks and why, and for each gap the
    command that fixes it. Most gaps are closed by setup-sandbox.sh, a script
    installed with nexusd: it installs Docker and bubblewrap (Debian/Ubuntu,
    needs root) and builds the check image offline from your apt mirror.

    \b
    Examples:
      nexusd doctor
      sudo bash "$(nexusd doctor --setup-script)"
    """
    if setup_script:
        click.echo(str(SETUP_SCRIPT))
        return
    from nexusd.sandbox.probe import report

    data = report(_config(repo))
    if as_json:
        echo_json(data)
        return
    for cap in data["capabilities"]:
        mark = paint("ok ", fg="green") if cap["ok"] else paint("NO ", fg="red", bold=True)
        click.echo(f"[{mark}] {cap['name']}: {cap['detail']}")
        if cap["fix"]:
            click.echo(f"       fix: {cap['fix']}")
    click.echo(f"checks run on: {data['backend']} ({data['reason']})")
    if not data["isolated"]:
        root = " As root, such a check can change any file on this machine."
        click.echo(
            f"{label('warning')} checks are NOT isolated; see the fixes above."
            + root * bool(data["running_as_root"]),
            err=True,
        )


def _config(repo: Path | None) -> Config:
    """This repository's configuration; outside any repository (a fresh machine, `~`), the
    defaults and your user file: what doctor checks is the machine, not a repository."""
    from nexusd.errors import GitError

    if repo is not None:
        return open_repo(repo)[1]
    try:
        return open_repo(None)[1]
    except GitError:
        click.echo(
            f"{label('note')} not in a git repository: checking for the default image and"
            " backend (run doctor in your repository to check the ones it configures)",
            err=True,
        )
        return load_config(None)
