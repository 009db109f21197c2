"""`nexusd check`: run the configured checks in the sandbox on a snapshot, never on live files."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.errors import EXIT_FAILED


@click.command()
@click.argument("names", nargs=-1)
@click.option(
    "--checkpoint",
    "checkpoint_id",
    default=None,
    help="Run on this checkpoint (id, prefix or `latest`) and attach the results as its note.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@repo_option
def check(
    names: tuple[str, ...], checkpoint_id: str | None, as_json: bool, repo: Path | None
) -> None:
    """Run the checks declared under `checks:` in .nexus/config.yaml (or only NAMES).

    \b
    Without --checkpoint the working tree is snapshotted through a temporary
    index and exported into the sandbox: your files and index are not touched.
    Exit status 1 when any check did not pass. `nexusd doctor` tells which
    isolation (docker, bwrap, subprocess) is used and why.
    """
    from nexusd.sandbox.reflection import reflect
    from nexusd.sandbox.runner import attach_results, overall_status, run_checks

    layout, config = open_repo(repo)
    commit = None
    if checkpoint_id is not None:
        from nexusd.checkpoint.listing import resolve

        commit = resolve(layout, checkpoint_id).commit
    results = run_checks(layout, config, treeish=commit, names=names)
    if commit is not None and results:
        attach_results(layout, commit, results)
    if as_json:
        echo_json({"status": overall_status(results), "results": [r.to_dict() for r in results]})
    elif not results:
        click.echo("no checks configured (add `checks:` to .nexus/config.yaml)")
    for result in results if not as_json else ():
        click.echo(reflect(result))
        for warning in result.warnings:
            click.echo(f"  WARNING: {warning}", err=True)
    if overall_status(results) == "failed":
        raise SystemExit(EXIT_FAILED)
