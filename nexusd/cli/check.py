"""`nexusd check`: run the configured checks in the sandbox on a snapshot, never on live files."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.errors import EXIT_FAILED, SandboxError

# Shells' convention (128 + the signal): a script can tell an interrupted run from a failed
# check (exit 1).
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


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
    Exit status 1 when a check failed or timed out, 6 when none did but the sandbox
    could not run one, 130 when interrupted (Ctrl-C), 143 when terminated (SIGTERM;
    the checks' processes are ended either way).
    `nexusd doctor` tells which isolation (docker, bwrap, subprocess) is used and why.
    """
    from nexusd.sandbox.reflection import reflect
    from nexusd.sandbox.runner import attach_results, overall_status, run_checks

    layout, config = open_repo(repo)
    commit = None
    if checkpoint_id is not None:
        from nexusd.checkpoint.listing import resolve

        commit = resolve(layout, checkpoint_id).commit
    try:
        with _terminate_as_exit():
            results = run_checks(layout, config, treeish=commit, names=names)
    except KeyboardInterrupt:
        click.echo("interrupted: the checks were stopped, nothing was recorded", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    if commit is not None and results:
        attach_results(layout, commit, results)
    if as_json:
        echo_json({"status": overall_status(results), "results": [r.to_dict() for r in results]})
    elif not results:
        click.echo("no checks configured (add `checks:` to .nexus/config.yaml)")
    for result in results if not as_json else ():
        click.echo(reflect(result))
    if not as_json:
        # The same fallback note heads every result: say each warning once.
        for warning in dict.fromkeys(w for r in results for w in r.warnings):
            click.echo(f"  WARNING: {warning}", err=True)
    statuses = {r.status for r in results}
    if statuses & {"failed", "timeout"}:
        raise SystemExit(EXIT_FAILED)
    if "error" in statuses:
        # No check failed, but some could not run: the sandbox is what needs fixing.
        raise SystemExit(SandboxError.exit_code)


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """Turn SIGTERM into SystemExit while the checks run, so the sandbox's cleanup (kill
    the check's process group, remove its workspace or container) runs: by default
    Python dies at once and a subprocess check keeps running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(EXIT_TERMINATED)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
