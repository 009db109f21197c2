"""Answering one request for the daemon or `nexusd plan`: under the request's claim, and
only when the file is a regular file inside the repository.

The claim (`nexusd.daemon.claims`) is taken by every process that answers: the daemon's
worker and any number of foreground `nexusd plan` runs. Whoever comes second waits, then
finds the response already names the request's content and skips it, so a request is
answered once.

A request that is a symbolic link is refused with an error response before a byte of
it is read: the link could point at /etc/passwd or at a key, and its text would end up
in the response, the daily note and the memory index. A request whose folder resolves
outside the repository is refused too, but nothing is written at all: that folder is
not ours (it may be another checkout's, whose daemon answers there).

A request deleted while it waits for the claim or while it is answered (a plan takes
seconds to minutes) gets no response: the pipeline looks again right before it writes
one and, the request gone, writes nothing, so whatever is at the response path (an
earlier response, or nothing because the user deleted it too) stays as it is. A request
deleted after that keeps its response, like one deleted just after its answer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from nexusd.config import Config
from nexusd.daemon.claims import request_claim, request_key
from nexusd.errors import ProtocolError
from nexusd.models.budget import AnswerStart
from nexusd.paths import RepoLayout
from nexusd.planner.grounding import Services
from nexusd.planner.pipeline import (
    RESPONSE_MODE,
    Outcome,
    OutcomeStatus,
    answer_request,
    kept_text,
)
from nexusd.planner.rejection import error_response
from nexusd.planner.response_file import write_response
from nexusd.protocol.documents import PlanResponse
from nexusd.protocol.naming import response_path_for, unanswerable_name
from nexusd.protocol.reading import response_meta
from nexusd.protocol.render import render_response


def outside_repository(layout: RepoLayout, path: Path) -> ProtocolError | None:
    """Why nothing may be read or written for `path`: its folder lies outside the repository."""
    root = layout.root.resolve()
    folder = path.parent.resolve()
    if folder.is_relative_to(root):
        return None
    return ProtocolError(
        f"the folder of {path.name} resolves to {folder}, outside the repository {root};"
        " nothing of the request was read and no response was written",
        hint="keep request folders inside the repository (`watch.paths` are relative"
        " to its root), not symbolic links to elsewhere",
    )


def refusal(layout: RepoLayout, path: Path) -> ProtocolError | None:
    """Why `path` must not be read on a request's behalf (None when it may be read)."""
    outside = outside_repository(layout, path)
    if outside is not None:
        return outside
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None  # gone: the pipeline reports an unreadable request as usual
    if stat.S_ISLNK(mode):
        target = path.readlink()
        return ProtocolError(
            f"{path.name} is a symbolic link (to {target}); nexusd does not follow links in"
            " request files, so nothing of it was read",
            hint="write the request as a regular file in its place (if the link's target is"
            f" the request you mean: `rm {path.name} && cp {target} {path.name}`)",
        )
    return None


def _fingerprint(message: str) -> str:
    # Stands in for the content hash (the content is never read): the same refusal is
    # written once, a changed link or a regular file in its place is answered anew.
    return hashlib.sha256(b"nexusd-refused\0" + message.encode("utf-8")).hexdigest()


def _is_refusal_of(meta: dict[str, object], path: Path) -> bool:
    """True when `meta` is a refusal nexusd wrote for the request named like `path`."""
    error = meta.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    # The fingerprint is derived from the message it carries, so an answer to the
    # request's content (or an error about it) can never pass for a refusal.
    return (
        meta.get("status") == "error"
        and meta.get("request_file") == path.name
        and isinstance(message, str)
        and meta.get("request_sha256") == _fingerprint(message)
    )


def refused_response(path: Path, error: ProtocolError, revision: int = 1) -> PlanResponse:
    """The error response for a request refused before it was read."""
    return error_response(
        error,
        request_name=path.name,
        sha256=_fingerprint(error.message),
        revision=revision,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        timings={},
    )


def _refuse(path: Path, error: ProtocolError, force: bool) -> Outcome:
    response = response_path_for(path)
    sha = _fingerprint(error.message)
    exists, old = response_meta(response)
    revision = old.get("revision") if old else 0
    revision = revision if isinstance(revision, int) else 0

    def done(status: OutcomeStatus, message: str, rev: int) -> Outcome:
        return Outcome(path, response, status, rev, sha, {}, message)

    if exists and old is None:
        return done("skipped", f"{response.name} exists but was not written by nexusd; kept it", 0)
    if old is not None and not _is_refusal_of(old, path):
        # An answer to what was there before (or to another request of that name): the
        # refusal is logged, and the response stays as it was, even with --force.
        kept = f"{error.message}; kept {response.name}, which is not a refusal of this request"
        return done("error", kept, 0)
    if old is not None and old.get("request_sha256") == sha and not force:
        return done("skipped", "already refused", revision)
    answer = refused_response(path, error, revision + 1)
    try:
        text = kept_text(answer, render_response(answer))
        beside = write_response(response, text, mode=RESPONSE_MODE)
    except OSError as exc:
        return done("error", f"cannot write {response}: {exc.strerror or exc}", revision + 1)
    return Outcome(
        path,
        response,
        "error",
        revision + 1,
        sha,
        {},
        error.message,
        title=answer.title,
        kept=beside,
    )


def _deleted(path: Path) -> bool:
    """True when nothing is at `path` any more (an unreadable folder is not a deletion)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def answer_claimed(
    path: Path,
    layout: RepoLayout,
    config: Config,
    *,
    force: bool = False,
    services: Services | None = None,
    on_wait: Callable[[], None] | None = None,
    start: AnswerStart | None = None,
) -> Outcome:
    """Answer the request at `path` exactly once, under its claim; refuse links and outsiders.

    A request deleted before its response is written gets none: the outcome is `skipped`
    with `gone` set (not an error, so nothing is retried), and nothing at the response
    path is touched.

    `planner.timeout_ms` counts from `start` (default: now), the wait for the claim included."""
    start = start or AnswerStart.now("the answer started")
    path = request_key(path)
    outside = outside_repository(layout, path)
    if outside is not None:
        # Not even a refusal is written: the folder is someone else's (another worktree's
        # daemon would answer there, and the two would overwrite each other forever).
        return Outcome(path, response_path_for(path), "error", 0, "", {}, outside.message)
    bad_name = unanswerable_name(path)
    if bad_name is not None:
        # Not UTF-8 (a response could not name it faithfully) or too long to have a response.
        message = f"{bad_name.message}; {bad_name.hint}"
        return Outcome(path, response_path_for(path), "error", 0, "", {}, message)
    with request_claim(layout, path, on_wait=on_wait):
        error = refusal(layout, path)
        if error is not None:
            return _refuse(path, error, force)
        response = response_path_for(path)
        if response.is_symlink():
            # Reading its front matter would read the link's target: treat it as foreign.
            note = f"{response.name} is a symbolic link, not a response nexusd wrote; kept it"
            return Outcome(path, response, "skipped", 0, "", {}, note)
        outcome = answer_request(
            path,
            layout,
            config,
            force=force,
            services=services,
            start=start,
            still_wanted=lambda: not _deleted(path),
        )
        if outcome.status == "error" and not outcome.sha256 and _deleted(path):
            # Not read: deleted while it was queued or waited for the claim.
            note = "it was deleted before it was read; no response was written for it"
            return dataclasses.replace(outcome, status="skipped", message=note, gone=True)
        return outcome
