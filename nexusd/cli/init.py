"""`nexusd init`: scaffold nexusd's files in this repository."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, repo_option
from nexusd.paths import find_repo
from nexusd.templates.scaffold import scaffold


@click.command("init")
@repo_option
@click.option("--json", "as_json", is_flag=True, help="Print what was created and kept as JSON.")
def init(repo: Path | None, as_json: bool) -> None:
    """Scaffold nexusd's files in this repository; safe to run again.

    \b
    Creates what is missing, never overwrites:
      .nexus/config.yaml            commented defaults (see `nexusd config show`)
      .scratchpad_logs/README.md    how the request/response folder works
      .scratchpad_logs/TEMPLATE_plan_request.md.example
                                    copy to <timestamp>_plan_request.md to ask for a plan
      MEMORY.md                     lessons, decisions, preferences
      memory/daily/                 daily notes

    Run it inside a git repository (or pass -C PATH).
    """
    layout = find_repo(repo)
    report = scaffold(layout)
    if as_json:
        echo_json({"root": str(layout.root), "created": report.created, "kept": report.kept})
        return
    for rel in report.created:
        click.echo(f"created  {rel}")
    for rel in report.kept:
        click.echo(f"kept     {rel}")
    click.echo(
        f"nexusd is set up in {layout.root}: next, `nexusd start`, then write a request "
        "with `nexusd request new --goal TEXT`."
    )
