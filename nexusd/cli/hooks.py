"""`nexusd hooks …`: install, remove or inspect the git hooks that feed the daemon's inbox."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._group import group


@group()
def hooks() -> None:
    """Git hooks (post-commit, post-merge, post-checkout) that queue work for nexusd.

    \b
    Each hook appends one line to <git-common-dir>/nexus/inbox/ and exits, so
    `git commit` stays fast and never fails because of nexusd. Existing hooks are
    kept and still run; core.hooksPath, husky and the pre-commit framework are
    respected. `uninstall` puts back exactly what was there.
    """


def _print(rows: list[dict[str, object]], as_json: bool) -> None:
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        chained = f"  (chains {r['chained']})" if r["chained"] else ""
        click.echo(f"{r['hook']:<14} {r['state']:<18} {r['path']}{chained}")


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def install(as_json: bool, repo: Path | None) -> None:
    """Install the hooks (idempotent), chaining any hook already there."""
    from nexusd.hooks.installer import install as do_install

    layout, _ = open_repo(repo)
    _print([s.to_dict() for s in do_install(layout)], as_json)


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def uninstall(as_json: bool, repo: Path | None) -> None:
    """Remove the hooks and restore the ones they chained, byte for byte."""
    from nexusd.hooks.installer import uninstall as do_uninstall

    layout, _ = open_repo(repo)
    _print([s.to_dict() for s in do_uninstall(layout)], as_json)


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def status(as_json: bool, repo: Path | None) -> None:
    """Show where each hook is installed (installed, behind-pre-commit, foreign, missing)."""
    from nexusd.hooks.installer import hooks_dir, hooks_path_setting
    from nexusd.hooks.installer import status as hook_status

    layout, _ = open_repo(repo)
    rows = [s.to_dict() for s in hook_status(layout)]
    if not as_json:
        setting = hooks_path_setting(layout)
        click.echo(
            f"hooks directory: {hooks_dir(layout)}"
            + (f"  (core.hooksPath={setting})" if setting else "")
        )
    _print(rows, as_json)
