"""`nexusd doctor`: which sandbox isolation this machine offers, and how to get better."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@repo_option
def doctor(as_json: bool, repo: Path | None) -> None:
    """Check the Docker Engine, the images, bubblewrap and user namespaces.

    \b
    Prints what `sandbox.backend: auto` picks and why, and for each gap the
    command that fixes it (usually scripts/setup-sandbox.sh).
    """
    from nexusd.sandbox.probe import report

    _, config = open_repo(repo)
    data = report(config)
    if as_json:
        echo_json(data)
        return
    for cap in data["capabilities"]:
        mark = "ok " if cap["ok"] else "NO "
        click.echo(f"[{mark}] {cap['name']}: {cap['detail']}")
        if cap["fix"]:
            click.echo(f"       fix: {cap['fix']}")
    click.echo(f"checks run on: {data['backend']} ({data['reason']})")
    if not data["isolated"]:
        click.echo("WARNING: checks are NOT isolated; see the fixes above.", err=True)
