"""`nexusd plan FILE`: answer one plan request in the foreground, no daemon needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from nexusd.cli._common import ProgressBar, echo_json, local_memory_service, repo_option
from nexusd.config import Config, load_config
from nexusd.errors import NexusError, ProtocolError
from nexusd.paths import RepoLayout, find_repo
from nexusd.planner.grounding import Services
from nexusd.protocol.naming import is_request_file, unanswerable_name

EXIT_ERROR_RESPONSE = ProtocolError.exit_code
# A plan made in this process searches memory without loading the embedding model (seconds
# of torch import and load for one plan); the response says so.
KEYWORD_ONLY = (
    "memory was searched by keyword only: no daemon holds the embedding model"
    " (`nexusd start` keeps it loaded, for semantic memory search)"
)


@click.command("plan")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@repo_option
@click.option(
    "--stdout",
    "to_stdout",
    is_flag=True,
    help="Print the response; write nothing: no response file, checkpoint, lesson, prompt "
    "log or telemetry (checks run on the working tree as it is).",
)
@click.option("--force", is_flag=True, help="Answer again even if this content was answered.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@click.option(
    "--memory/--no-memory",
    default=True,
    help="Cite memory hits. Without a running daemon memory is searched by keyword only "
    "(the embedding model is not loaded) and the response says so.",
)
def plan(
    file: Path, *, repo: Path | None, to_stdout: bool, force: bool, as_json: bool, memory: bool
) -> None:
    """Answer the plan request FILE and print the response's path.

    FILE is named `<timestamp>_plan_request.md`; the response is written next to it as
    `<timestamp>_plan_response.md`. A request already answered with the same content is
    skipped (use --force to answer it again). Exits with 4 when the request cannot be
    answered as written: the error response says what to fix.

    \b
    Examples:
      nexusd plan .scratchpad_logs/2025-05-08T14_02_11_plan_request.md
      nexusd plan --stdout .scratchpad_logs/2025-05-08T14_02_11_plan_request.md | less
    """
    from nexusd.daemon.answering import (
        answer_claimed,
        outside_repository,
        refusal,
        refused_response,
    )
    from nexusd.daemon.claims import request_key
    from nexusd.models.budget import AnswerStart
    from nexusd.planner.pipeline import build_response
    from nexusd.protocol.render import render_response
    from nexusd.readonly import read_only

    if not is_request_file(file):
        raise ProtocolError(
            f"{file.name} is not named like a plan request",
            hint="name it `<timestamp>_plan_request.md`, e.g. 2025-05-08T14_02_11_plan_request.md",
        )
    if not file.is_file() and not file.is_symlink():
        if file.exists():
            # A FIFO would block the read forever; a folder has nothing to read.
            raise NexusError(
                f"{file} is not a regular file", hint="write the request as a regular file"
            )
        raise NexusError(f"{file} does not exist", hint="pass the path of a request file")
    # The folder resolved, the name kept: a link is judged (and refused), never followed.
    request = request_key(file.absolute())
    layout = find_repo(repo or request.parent)
    outside = outside_repository(layout, request)
    if outside is not None:
        # Nothing is written there, not even a refusal: the folder is not this repository's.
        raise outside
    bad_name = unanswerable_name(request)
    if bad_name is not None:
        raise bad_name  # no response can be written (or name it): nothing is read
    # planner.timeout_ms counts from the command's start: imports and the code index too.
    start = AnswerStart.command()
    config = load_config(layout.root)
    services = foreground_services(layout, config, memory)
    ctx = click.get_current_context()
    if to_stdout:
        error = refusal(layout, request)
        with read_only():
            response = (
                refused_response(request, error)
                if error is not None
                else build_response(request, layout, config, services=services, start=start)
            )
        click.echo(render_response(response), nl=False)
        ctx.exit(EXIT_ERROR_RESPONSE if response.meta.status == "error" else 0)

    def waiting() -> None:
        click.echo(f"another nexusd process is answering {request.name}; waiting for it", err=True)

    outcome = answer_claimed(
        request, layout, config, force=force, services=services, on_wait=waiting, start=start
    )
    if outcome.status == "error" and not outcome.response_path.is_file():
        raise NexusError(outcome.message, hint="make the request's folder writable")
    if as_json:
        echo_json(
            {
                "request": str(outcome.request_path),
                "response": str(outcome.response_path),
                "status": outcome.status,
                "revision": outcome.revision,
                "sha256": outcome.sha256,
                "timings_ms": dict(outcome.timings_ms),
                "message": outcome.message,
                "kept": [str(k.path) for k in outcome.kept],
            }
        )
    else:
        click.echo(str(outcome.response_path))
        if outcome.status != "ok":
            click.echo(f"{outcome.status}: {outcome.message}", err=True)
    for kept in outcome.kept:
        click.echo(f"kept: {kept.note()}", err=True)
    ctx.exit(EXIT_ERROR_RESPONSE if outcome.status == "error" else 0)


def foreground_services(layout: RepoLayout, config: Config, memory: bool) -> Services:
    """Memory and code for a foreground plan: the daemon's (through its socket) or made here."""
    from nexusd.memory.client import listening

    # Listening, not merely present: a daemon killed with -9 leaves its socket file, and a
    # plan that asked it would go without memory, silently.
    if listening(layout.socket_path):
        return Services()  # the pipeline asks the running daemon
    code = _code_index(layout, config)
    if not memory or not config.memory.enabled:
        return Services(code=code)
    if not (layout.memory_file.exists() or any(layout.daily_dir.glob("*.md"))):
        return Services(code=code)
    return Services(
        memory=local_memory_service(layout, config, vector=False),
        code=code,
        warnings=(KEYWORD_ONLY,),
    )


def _code_index(layout: RepoLayout, config: Config) -> Any:
    """The code index brought up to date here, a bar on stderr while a first build parses."""
    if not config.code.enabled:
        return None
    from nexusd.context.relevant_code import local_index

    # A first build (or a checkout) takes seconds; a few edited files are not worth a line.
    progress = ProgressBar("no daemon running: indexing the code", min_total=50)
    try:
        return local_index(layout, config, progress)
    except Exception:  # the plan's code phase tries again and says why in the response
        return None
    finally:
        progress.close()
