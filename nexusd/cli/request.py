"""`nexusd request new`: write a canonical plan request into the watched folder."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from nexusd.cli._answer import wait_for_answer
from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._group import group
from nexusd.cli._style import label
from nexusd.daemon.waiting import daemon_watches
from nexusd.errors import NexusError
from nexusd.protocol.naming import response_path_for
from nexusd.protocol.parse import parse_request
from nexusd.protocol.render import render_request
from nexusd.protocol.request_files import create_request_file


@group()
def request() -> None:
    """Write plan requests; the daemon (or `nexusd plan FILE`) answers them."""


@request.command("new")
@click.option(
    "--goal",
    help="What this cycle must achieve (required unless --edit); `-` reads it from standard "
    "input, e.g. an issue pasted whole.",
)
@click.option("--cycle", type=click.IntRange(min=0), help="Cycle number, e.g. 3.")
@click.option("--project", help="Project name.")
@click.option("--previous-goal", help="Goal of the previous cycle.")
@click.option("--previous-outcome", help="What the previous cycle achieved.")
@click.option("--blocker", "blockers", multiple=True, help="A current blocker (repeatable).")
@click.option("--artifact", "artifacts", multiple=True, help="A relevant file (repeatable).")
@click.option("--history-path", help="The previous cycle's response, relative to the repo.")
@click.option("--time-box", help="Time box, e.g. '2 hours'.")
@click.option("--edit", is_flag=True, help="Fill in the request in $EDITOR before writing it.")
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write here (relative to the current directory), not in the first of `watch.paths`.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="Wait for the answer and print the response's path; without a daemon, answer here.",
)
@click.option("--print", "print_", is_flag=True, help="Wait, then print the response itself.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    help="Seconds --wait waits for the daemon.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the paths as JSON.")
@repo_option
def new(
    *,
    goal: str | None,
    cycle: int | None,
    project: str | None,
    previous_goal: str | None,
    previous_outcome: str | None,
    blockers: tuple[str, ...],
    artifacts: tuple[str, ...],
    history_path: str | None,
    time_box: str | None,
    edit: bool,
    folder: Path | None,
    wait: bool,
    print_: bool,
    timeout: float,
    as_json: bool,
    repo: Path | None,
) -> None:
    """Write a new `<UTC timestamp>_plan_request.md` and print its path.

    \b
    The request uses the canonical front-matter form (see PROTOCOL.md); the
    daemon answers it with `<same timestamp>_plan_response.md` next to it.
    Give the goal with --goal (`--goal -` reads it from standard input: a
    whole issue, its code blocks and traceback too), or use --edit to write
    the whole request in $EDITOR (nothing is written if you quit without
    saving). The request is checked before it is written: a request without
    a goal is refused.

    Only a running daemon (`nexusd start`) answers it on its own. With --wait
    the command waits for the response and prints its path (--print: the
    response itself); with no daemon running it answers the request itself,
    as `nexusd plan` would. Exits 4 when the response is an error response.

    \b
    Examples:
      nexusd request new --goal "Fix the flaky login test" --cycle 2
      nexusd request new --goal "Add a --verbose flag" --wait --print | less
      nexusd request new --goal "Speed up CI" --artifact .ci/run --blocker "tests time out"
      gh issue view 42 --json title,body -q '.title+"\\n\\n"+.body' | nexusd request new --goal -
      nexusd request new --edit
    """
    if goal == "-" and edit:
        # The editor needs the terminal that standard input would have been.
        raise click.UsageError("--goal - reads standard input and --edit the terminal: use one")
    if not (goal or "").strip() and not edit:
        # A blank --goal is the same mistake as none: the flag, not front matter, is to fix.
        raise click.UsageError("give the goal with --goal TEXT, or write it in $EDITOR with --edit")
    layout, config = open_repo(repo)
    if goal == "-":
        goal = _stdin_goal(config.watch.max_request_bytes)
    target = folder if folder is not None else layout.root / config.watch.paths[0]
    text = render_request(
        goal=goal or "",
        cycle=cycle,
        project=project,
        previous_goal=previous_goal,
        previous_outcome=previous_outcome,
        blockers=blockers,
        artifacts=artifacts,
        history_path=history_path,
        time_box=time_box,
    )
    if edit:
        edited = click.edit(text, extension=".md", require_save=True)
        if edited is None:
            raise click.ClickException("nothing written: the editor was closed without saving")
        text = edited
    parse_request(text, "<new request>", max_bytes=config.watch.max_request_bytes)
    path = create_request_file(target, text, datetime.now(UTC), root=layout.root).resolve()
    if wait or print_:
        answer = wait_for_answer(layout, config, path, timeout=timeout)
        _show(path, answer.response, as_json, print_, status=answer.status)
        click.get_current_context().exit(4 if answer.status == "error" else 0)
    watched = [(layout.root / p).resolve() for p in config.watch.paths]
    if path.parent.resolve() not in watched:
        note = f"note: {path.parent} is not in watch.paths; only `nexusd plan FILE` answers it"
        click.echo(note, err=True)
    elif not daemon_watches(layout, config, path):
        click.echo(_NO_DAEMON.format(label=label("note"), path=_shown(path)), err=True)
    _show(path, response_path_for(path), as_json, False)


def _stdin_goal(max_bytes: int) -> str:
    """The goal read from standard input as UTF-8 text with `\n` line ends (a terminal is
    told how to end it); usage errors for empty, oversized or undecodable input."""
    if sys.stdin.isatty():
        click.echo("Paste the goal, then press Ctrl-D on a line of its own:", err=True)
    data = sys.stdin.buffer.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise click.UsageError(
            f"standard input is over watch.max_request_bytes ({max_bytes:,} bytes): keep the "
            "report's text and traceback, and trim pasted logs to their first and last lines"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(
            f"standard input is not UTF-8 text (byte {exc.start}): convert it first, e.g. "
            "`iconv -f latin1 -t utf-8`"
        ) from exc
    if not text.strip():
        raise click.UsageError("standard input was empty: pipe the goal in, or use --goal TEXT")
    # `gh` and Windows editors write CRLF: the request keeps `\n`, as every other goal has.
    return text.replace("\r\n", "\n").replace("\r", "\n")


_NO_DAEMON = """\
{label} no nexusd daemon runs for this repository, so nothing will answer this request.
  fix: `nexusd start` (answers it, and every request after it, in the background),
       `nexusd plan {path}` (answers this one now), or add --wait next time"""


def _shown(path: Path) -> str:
    """`path` relative to the current directory when it lies below it."""
    here = Path.cwd().resolve()
    return os.path.relpath(path, here) if path.is_relative_to(here) else str(path)


def _show(
    request: Path, response: Path, as_json: bool, text: bool, status: str | None = None
) -> None:
    """Print the request's and response's paths (JSON), the response itself, or a path."""
    if as_json:
        data = {"request": str(request), "response": str(response)}
        echo_json(data if status is None else {**data, "status": status})
    elif text:
        from nexusd.protocol.reading import read_regular_file

        try:
            body = read_regular_file(response)
        except OSError as exc:
            raise NexusError(
                f"cannot read {response}: {exc.strerror or exc}",
                hint="the response must be a regular file; nexusd does not follow links there",
            ) from exc
        click.echo(body.decode("utf-8", "replace"), nl=False)
    else:
        click.echo(_shown(response if status is not None else request))
