"""Getting a request answered from the CLI: by the running daemon, or in this process.

`nexusd request new --wait` uses it. With a daemon that watches the request's folder it
waits for the daemon's response; without one (or when the daemon stops meanwhile) it
answers here through `answer_claimed`, the path `nexusd plan` takes, under the same
per-request claim as the daemon, so the request is still answered exactly once.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import click

from nexusd.config import Config
from nexusd.daemon.lock import running_pid
from nexusd.errors import DaemonError
from nexusd.paths import RepoLayout

_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Answer:
    """Where the response is, its status (`ok`, `error`) and who wrote it."""

    response: Path
    status: str
    by: str  # "daemon" or "this process"


def daemon_watches(layout: RepoLayout, config: Config, request: Path) -> bool:
    """True when a daemon runs for this repository and watches the request's folder."""
    root = layout.root.resolve()
    folder = request.parent.resolve()
    watched = [(layout.root / p).resolve() for p in config.get("watch.paths")]
    # The daemon refuses to watch a folder that resolves outside the repository.
    inside = folder.is_relative_to(root)
    return inside and folder in watched and running_pid(layout) is not None


def _answered(request: Path, response: Path) -> str | None:
    """The response's status if it answers the request's current bytes, else None."""
    from nexusd.protocol.reading import read_regular_file, response_meta

    try:
        sha = hashlib.sha256(read_regular_file(request)).hexdigest()
    except OSError:
        return None
    _, meta = response_meta(response)
    if meta is None or meta.get("request_sha256") != sha:
        return None
    return str(meta.get("status"))


def wait_for_answer(layout: RepoLayout, config: Config, request: Path, *, timeout: float) -> Answer:
    """Wait for the daemon's response to `request`, or answer it here when no daemon will."""
    from nexusd.protocol.naming import response_path_for

    response = response_path_for(request)
    deadline = time.monotonic() + timeout
    while daemon_watches(layout, config, request):
        status = _answered(request, response)
        if status is not None:
            return Answer(response, status, "daemon")
        if time.monotonic() > deadline:
            raise DaemonError(
                f"the daemon did not answer {request.name} within {timeout:g} s",
                hint="see what it is doing with `nexusd status` and `nexusd logs`; the request"
                f" stays in place (answer it here with `nexusd plan {request}`)",
            )
        time.sleep(_POLL_SECONDS)
    return answer_here(layout, config, request)


def answer_here(layout: RepoLayout, config: Config, request: Path) -> Answer:
    """Answer `request` in this process, as `nexusd plan` does (the claim included)."""
    from nexusd.cli.plan import foreground_services
    from nexusd.daemon.answering import answer_claimed, outside_repository
    from nexusd.errors import NexusError

    outside = outside_repository(layout, request)
    if outside is not None:
        raise outside  # nothing is answered, written or shown from a folder not ours
    click.echo(
        "no daemon running: answering the request in this process"
        " (`nexusd start` answers requests in the background)",
        err=True,
    )
    outcome = answer_claimed(
        request, layout, config, services=foreground_services(layout, config, memory=True)
    )
    if outcome.status == "error" and not outcome.response_path.is_file():
        raise NexusError(outcome.message, hint="make the request's folder writable")
    status = _answered(request, outcome.response_path) or outcome.status
    return Answer(outcome.response_path, status, "this process")
