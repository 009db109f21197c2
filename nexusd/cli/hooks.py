"""`nexusd hooks …`: install, remove or inspect the git hooks that feed the daemon's inbox."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._group import group
from nexusd.cli._style import label


@group()
def hooks() -> None:
    """Git hooks (post-commit, post-merge, post-checkout) that queue work for nexusd.

    \b
    Each hook appends one line to <git-common-dir>/nexus/inbox/ and exits, so
    `git commit` stays fast and never fails because of nexusd. Existing hooks are
    kept and still run as before, failing the git command when they fail;
    core.hooksPath, husky and the pre-commit framework are
    respected. `uninstall` puts back exactly what was there. Without a running
    daemon the events wait in the inbox for its next start.

    \b
    Examples:
      nexusd hooks install           # once per clone (worktrees share the hooks)
      nexusd hooks status            # installed, behind-pre-commit, outdated, foreign, missing
      nexusd hooks uninstall         # your own hooks are back, byte for byte
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
    """Install the hooks, chaining any hook already there (running it twice is safe).

    A hook already in place is renamed <hook>.nexusd-chained and runs in its place
    once nexusd's line is queued: same arguments, stdin and output, and its exit
    status is the hook's. Installing again updates outdated hooks.

    \b
    Examples:
      nexusd hooks install
      nexusd hooks install -C ~/src/other-repo --json
    """
    from nexusd.hooks.installer import install as do_install
    from nexusd.hooks.installer import shared_hooks_origin

    layout, _ = open_repo(repo)
    _print([s.to_dict() for s in do_install(layout)], as_json)
    origin = shared_hooks_origin(layout)
    if origin:
        click.echo(
            f"{label('note')} core.hooksPath comes from {origin}: these hooks run in every"
            " repository that uses that folder (they queue work only where nexusd runs)",
            err=True,
        )


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def uninstall(as_json: bool, repo: Path | None) -> None:
    """Remove the hooks and restore the ones they chained, byte for byte.

    \b
    Example:
      nexusd hooks uninstall --json
    """
    from nexusd.hooks.installer import uninstall as do_uninstall

    layout, _ = open_repo(repo)
    _print([s.to_dict() for s in do_uninstall(layout)], as_json)


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def status(as_json: bool, repo: Path | None) -> None:
    """Show where each hook is and what it chains.

    \b
    States:
      installed          nexusd's hook is in place (chaining yours, if any)
      behind-pre-commit  the pre-commit framework runs it as its legacy hook
      outdated           an older nexusd's hook, which hides your chained hook's
                         failures: run `nexusd hooks install`
      foreign            another hook is there: run `nexusd hooks install`
      missing            no hook: run `nexusd hooks install`

    \b
    Example:
      nexusd hooks status --json
    """
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
    if not as_json and any(r["state"] == "outdated" for r in rows):
        click.echo(
            f"{label('note')} outdated hooks ignore the exit status of the hooks they chain:"
            " run `nexusd hooks install` to update them",
            err=True,
        )
