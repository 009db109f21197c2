"""`nexusd solve`: let the configured model write code until the sandbox says it works."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.errors import EXIT_FAILED


@click.command("solve")
@click.argument("task")
@click.option(
    "--lang",
    "language",
    default="python",
    show_default=True,
    help="Language of the program: python, sh or bash.",
)
@click.option(
    "--max-retries",
    default=10,
    show_default=True,
    type=click.IntRange(0, 100),
    help="Attempts after the first one before giving up.",
)
@click.option("--no-memory", is_flag=True, help="Do not save the solution to memory.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def solve(
    *, task: str, language: str, max_retries: int, no_memory: bool, as_json: bool, repo: Path | None
) -> None:
    """Generate a program for TASK, run it in the sandbox, reflect on errors, retry.

    \b
    Needs a model: set `planner.provider` (or `routing.builder.provider`) in
    .nexus/config.yaml. A solution is saved to memory (problem, errors met,
    final code, attempts) and printed. Exit code 1 when no attempt passed.
    """
    from nexusd.solve.loop import solve as run_solve

    if not task.strip():
        raise click.UsageError("TASK is empty: say what the program must do")
    layout, config = open_repo(repo)
    result = run_solve(
        layout=layout,
        config=config,
        task=task,
        language=language,
        max_retries=max_retries,
        save=not no_memory,
    )
    if as_json:
        echo_json(result.as_dict())
    else:
        for a in result.attempts:
            status = "passed" if a.result.passed else f"failed (exit {a.result.exit_code})"
            click.echo(
                f"attempt {a.number}: {status}" + (f" — {a.reflection}" if a.reflection else "")
            )
        for note in result.notes:
            click.echo(f"note: {note}")
        click.echo(result.memory_text or f"not solved after {len(result.attempts)} attempt(s)")
    if not result.success:
        raise SystemExit(EXIT_FAILED)
