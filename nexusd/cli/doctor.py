"""`nexusd doctor`: which sandbox isolation this machine offers, and how to get better."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._style import label, paint

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

    _, config = open_repo(repo)
    data = report(config)
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
        click.echo(f"{label('warning')} checks are NOT isolated; see the fixes above.", err=True)
