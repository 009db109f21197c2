"""Getting one request answered: by the running daemon, or in this process, within a time box.

`nexusd request new --wait` and the API's `request_plan` use it. With a daemon that
watches the request's folder it waits for the daemon's response; without one (or when
the daemon stops meanwhile) it answers here through `answer_claimed`, the path
`nexusd plan` takes, under the same per-request claim as the daemon, so the request is
still answered exactly once. With `bound_here`, an answer made here is made in a worker
thread and the wait ends at the deadline too: `AnswerPending` names the response's path,
and the thread carries on writing it there.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nexusd.config import Config
from nexusd.daemon.lock import running_pid
from nexusd.errors import DaemonError, NexusError
from nexusd.paths import RepoLayout
from nexusd.planner.grounding import Services

log = logging.getLogger("nexusd.daemon")
_POLL_SECONDS = 0.05
ServicesFactory = Callable[[], Services]


@dataclass(frozen=True)
class Answer:
    """Where the response is, its status (`ok`, `error`) and who wrote it."""

    response: Path
    status: str
    by: str  # "daemon" or "this process"


class AnswerPending(DaemonError):
    """The deadline passed before the response was written; it will appear at `response`."""

    def __init__(self, message: str, *, hint: str, response: Path, by: str) -> None:
        super().__init__(message, hint=hint)
        self.response = response
        self.by = by


def daemon_watches(layout: RepoLayout, config: Config, request: Path) -> bool:
    """True when a daemon runs for this repository and watches the request's folder."""
    root = layout.root.resolve()
    folder = request.parent.resolve()
    watched = [(layout.root / p).resolve() for p in config.watch.paths]
    # The daemon refuses to watch a folder that resolves outside the repository.
    inside = folder.is_relative_to(root)
    return inside and folder in watched and running_pid(layout) is not None


def answered(request: Path, response: Path) -> str | None:
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


def wait_for_answer(
    layout: RepoLayout,
    config: Config,
    request: Path,
    *,
    timeout: float,
    services: ServicesFactory,
    announce: Callable[[str], None] = log.info,
    bound_here: bool = False,
) -> Answer:
    """Wait for the daemon's response to `request`, or answer it here when no daemon will.

    AnswerPending when the daemon has not answered by the deadline (or, with `bound_here`,
    this process has not)."""
    from nexusd.protocol.naming import response_path_for

    response = response_path_for(request)
    deadline = time.monotonic() + timeout
    while daemon_watches(layout, config, request):
        status = answered(request, response)
        if status is not None:
            return Answer(response, status, "daemon")
        if time.monotonic() > deadline:
            raise AnswerPending(
                f"the daemon did not answer {request.name} within {timeout:g} s",
                hint="see what it is doing with `nexusd status` and `nexusd logs`; the request"
                f" stays in place (answer it here with `nexusd plan {request}`)",
                response=response,
                by="daemon",
            )
        time.sleep(_POLL_SECONDS)
    if not bound_here:
        return answer_here(layout, config, request, services(), announce)
    return _answer_in_thread(layout, config, request, response, services, announce, deadline)


def _answer_in_thread(  # noqa: PLR0917 (the waiter's own arguments, passed on)
    layout: RepoLayout,
    config: Config,
    request: Path,
    response: Path,
    services: ServicesFactory,
    announce: Callable[[str], None],
    deadline: float,
) -> Answer:
    """`answer_here` in a worker thread, waited for until `deadline`; the thread is not a
    daemon thread, so the response (at `response`) is written even when the caller has
    moved on."""
    done: list[Answer | BaseException] = []

    def work() -> None:
        try:
            done.append(answer_here(layout, config, request, services(), announce))
        except BaseException as exc:
            log.exception("answering %s in this process failed", request.name)
            done.append(exc)

    worker = threading.Thread(target=work, name=f"nexusd-answer-{request.name}")
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if not done:
        raise AnswerPending(
            f"{request.name} is still being answered in this process after the time box",
            hint=f"the response will be written to {response.name} beside the request;"
            " read it there (or the nexusd://plans/latest resource) when it appears",
            response=response,
            by="this process",
        )
    result = done[0]
    if isinstance(result, BaseException):
        raise result
    return result


def answer_here(
    layout: RepoLayout,
    config: Config,
    request: Path,
    services: Services,
    announce: Callable[[str], None] = log.info,
) -> Answer:
    """Answer `request` in this process, as `nexusd plan` does (the claim included)."""
    from nexusd.daemon.answering import answer_claimed, outside_repository

    outside = outside_repository(layout, request)
    if outside is not None:
        raise outside  # nothing is answered, written or shown from a folder not ours
    announce(
        "no daemon running: answering the request in this process"
        " (`nexusd start` answers requests in the background)"
    )
    outcome = answer_claimed(request, layout, config, services=services)
    if outcome.status == "error" and not outcome.response_path.is_file():
        raise NexusError(outcome.message, hint="make the request's folder writable")
    for kept in outcome.kept:
        announce(f"kept: {kept.note()}")
    status = answered(request, outcome.response_path) or outcome.status
    return Answer(outcome.response_path, status, "this process")
