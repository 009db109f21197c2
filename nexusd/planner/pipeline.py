"""The pipeline that answers one request: read → parse → librarian → architect → render → write.

Each phase is a small function taking and returning values; the lead wires the
checkpoint and critic (checks) phases in between librarian and architect. The
response file is the record of what was answered: it names the request's sha256,
so a request is answered exactly once, across crashes, and again only when edited. It is
written by `response_file.write_response`, which replaces only nexusd's own unchanged
text: a response someone changed is kept beside the new one and named in its warnings.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from nexusd.config import Config
from nexusd.context.librarian import ContextBundle, gather
from nexusd.context.relevant_code import relevant_code_section
from nexusd.errors import NexusError, ProtocolError
from nexusd.models.budget import AnswerStart, model_budget
from nexusd.models.telemetry import record
from nexusd.paths import RepoLayout
from nexusd.planner.architect import PLANNER_NAME, standard_sections, title_for
from nexusd.planner.grounding import (
    Services,
    checkpoint_section,
    evidence_section,
    grounding,
    with_lessons_first,
)
from nexusd.planner.model_plan import model_phase
from nexusd.planner.rejection import error_response, setup_error_response
from nexusd.planner.request_read import (
    PhaseClock,
    RawRequest,
    parse_phase,
    read_request,
)
from nexusd.planner.requested import requested_sections
from nexusd.planner.response_file import KeptFile, TextFor, write_response
from nexusd.protocol.documents import (
    STANDARD_SECTIONS,
    PlanRequest,
    PlanResponse,
    ResponseMeta,
    Section,
)
from nexusd.protocol.naming import response_path_for
from nexusd.protocol.reading import response_meta
from nexusd.protocol.render import render_response
from nexusd.sandbox.request_checks import checks_section
from nexusd.templates.scaffold import own_files

log = logging.getLogger(__name__)

OutcomeStatus = Literal["ok", "error", "skipped"]
# Responses are read by editors and agents: rw-r--r-- (mkstemp alone would give 0600).
RESPONSE_MODE = 0o644


@dataclass(frozen=True)
class Outcome:
    """What answering one request did; the daemon logs it and counts it in `status`."""

    request_path: Path
    response_path: Path
    status: OutcomeStatus  # skipped = this exact content was already answered
    revision: int
    sha256: str
    timings_ms: Mapping[str, float]
    message: str = ""  # error summary for logs and `nexusd status`
    cycle: int | None = None
    title: str = ""  # the response's title, e.g. "Plan for cycle 3: <goal>"
    # The request was gone (deleted, renamed away) before its response was written: nothing
    # was written for it, and the version read is no longer there to have been handled.
    gone: bool = False
    # What was at the response path and was not nexusd's own unchanged text (a response a
    # person edited): moved beside it, named in the new response's warnings.
    kept: tuple[KeptFile, ...] = ()


def _rel(layout: RepoLayout, path: Path) -> str:
    try:
        return path.resolve().relative_to(layout.root.resolve()).as_posix()
    except ValueError:
        return str(path)


def librarian_phase(
    request: PlanRequest, request_path: Path, layout: RepoLayout, config: Config
) -> ContextBundle:
    """Phase 1: the context bundle (facts only)."""
    response = response_path_for(request_path)
    own = own_files(layout, config)
    return gather(request, request_path, layout.root, config, response, own=own)


def architect_phase(bundle: ContextBundle, config: Config) -> tuple[Section, ...]:
    """Phase 3: the offline planner's sections (the requested ones when the request names any)."""
    max_actions = config.planner.max_actions
    if bundle.request.requested_sections:
        return requested_sections(bundle, bundle.request.requested_sections, max_actions)
    return standard_sections(bundle, max_actions)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def respond(
    raw: RawRequest,
    *,
    request_path: Path,
    layout: RepoLayout,
    config: Config,
    revision: int,
    clock: PhaseClock,
    services: Services | None = None,
    after_write: list[Callable[[], object]] | None = None,
    start: AnswerStart | None = None,
) -> PlanResponse:
    """Parse and plan an already-read request; a ProtocolError becomes an error response.

    `after_write` collects what must happen only once the response is on disk (learning
    from the checks: only answered cycles count). `start`: when the answer started, from
    which `planner.timeout_ms` counts (default: now)."""
    max_bytes = config.watch.max_request_bytes
    try:
        request = parse_phase(raw, _rel(layout, request_path), max_bytes)
    except ProtocolError as exc:
        clock.lap("parse")
        return error_response(
            exc,
            request_name=request_path.name,
            sha256=raw.sha256,
            revision=revision,
            created_at=_now(),
            timings=clock.timings,
        )
    clock.lap("parse")
    # planner.timeout_ms bounds the whole answer; the model calls get what is left of it.
    with model_budget(float(config.planner.timeout_ms) / 1000.0, start):
        return _plan(
            raw,
            request,
            request_path=request_path,
            layout=layout,
            config=config,
            revision=revision,
            clock=clock,
            services=services,
            after_write=after_write,
        )


def _plan(
    raw: RawRequest,
    request: PlanRequest,
    *,
    request_path: Path,
    layout: RepoLayout,
    config: Config,
    revision: int,
    clock: PhaseClock,
    services: Services | None,
    after_write: list[Callable[[], object]] | None,
) -> PlanResponse:
    with grounding(layout, config, request, services or Services()) as collect:
        bundle = librarian_phase(request, request_path, layout, config)
        clock.lap("librarian")
        found = collect()
    # The checkpoint, memory and code phases run beside the librarian: this is only the wait
    # for them after it; their own durations are `grounding.<phase>` (so each may exceed it).
    clock.lap("grounding_wait")
    for name, ms in bundle.timings_ms.items():
        clock.add(f"librarian.{name}", ms)
    for name, ms in found.timings_ms.items():
        clock.add(f"grounding.{name}", ms)
    checkpoint, critic, hits = found.checkpoint, found.critic, found.hits
    if critic.learn is not None and after_write is not None:
        after_write.append(critic.learn)
    bundle = dataclasses.replace(
        bundle,
        checkpoint=checkpoint.id if checkpoint else None,
        check_results=critic.statuses,
        memory_hits=hits,
        code_hits=found.code.hits,
        code_tests=found.code.tests,
        warnings=bundle.warnings + found.warnings,
    )
    sections = with_lessons_first(architect_phase(bundle, config), hits)
    clock.lap("architect")
    sections, planner, usage, notes = model_phase(
        layout, config, request, bundle=bundle, sections=sections, critic=critic
    )
    if usage or notes or planner != PLANNER_NAME:
        clock.lap("model")  # a model was asked, even if its answer was not used
    if not request.requested_sections:
        # A request that names its sections gets exactly those; the rest is in front matter.
        code = relevant_code_section(bundle.code_hits, found.code.reproduction)
        sections = after_analysis(sections, code)
        extra = (
            evidence_section(hits, found.memory_note),
            checks_section(critic),
            checkpoint_section(checkpoint) if checkpoint else None,
        )
        sections = sections + tuple(s for s in extra if s is not None)
    meta = ResponseMeta(
        request_file=request_path.name,
        request_sha256=raw.sha256,
        revision=revision,
        status="ok",
        planner=planner,
        created_at=_now(),
        cycle=request.cycle,
        timings_ms=tuple(clock.timings.items()),
        checkpoint=bundle.checkpoint,
        checks=bundle.check_results,
        warnings=bundle.warnings + notes,
        model_usage=usage,
        relevant_files=tuple(h.path for h in bundle.code_hits),
    )
    return PlanResponse(meta=meta, title=title_for(bundle), sections=sections)


def after_analysis(sections: tuple[Section, ...], extra: Section | None) -> tuple[Section, ...]:
    """`sections` with `extra` right after the analysis (first when there is none)."""
    if extra is None:
        return sections
    titles = [s.title for s in sections]
    at = titles.index(STANDARD_SECTIONS[0]) + 1 if STANDARD_SECTIONS[0] in titles else 0
    return (*sections[:at], extra, *sections[at:])


def build_response(
    request_path: Path,
    layout: RepoLayout,
    config: Config,
    *,
    revision: int = 1,
    services: Services | None = None,
    start: AnswerStart | None = None,
) -> PlanResponse:
    """The response for a request file, without writing it (raises OSError if unreadable)."""
    start = start or AnswerStart.now("the answer started")
    clock = PhaseClock()
    raw = read_request(request_path, config.watch.max_request_bytes)
    clock.lap("read")
    return respond(
        raw,
        request_path=request_path,
        layout=layout,
        config=config,
        revision=revision,
        clock=clock,
        services=services,
        start=start,
    )


def answer_request(
    request_path: Path,
    layout: RepoLayout,
    config: Config,
    *,
    force: bool = False,
    services: Services | None = None,
    start: AnswerStart | None = None,
    still_wanted: Callable[[], bool] | None = None,
) -> Outcome:
    """Answer one request file exactly once per content; never raises for bad requests.

    `request_path` must be named `*_plan_request.md` (ValueError otherwise). Unreadable
    requests, unwritable responses and configuration errors come back as status `error`
    with the message; nothing is written for them. `planner.timeout_ms` counts from
    `start` (default: now). `still_wanted` is asked right before the response is written:
    False (the request was deleted meanwhile) writes nothing, learns nothing and records
    nothing; the outcome is `skipped` with `gone` set. Whatever was at the response path
    and was not nexusd's own unchanged text (a response the user edited, before or while
    this answer ran) is kept beside it: the outcome's `kept`, the response's warnings.
    """
    start = start or AnswerStart.now("the answer started")
    clock = PhaseClock()
    response_path = response_path_for(request_path)
    max_bytes = config.watch.max_request_bytes

    def done(status: OutcomeStatus, revision: int, sha: str, message: str = "") -> Outcome:
        timings = {**clock.timings, "total": clock.total()}
        return Outcome(request_path, response_path, status, revision, sha, timings, message)

    try:
        raw = read_request(request_path, max_bytes)
    except OSError as exc:
        return done("error", 0, "", f"cannot read {request_path}: {exc.strerror or exc}")
    clock.lap("read")
    exists, old = response_meta(response_path)
    old_revision = _int(old.get("revision")) if old else 0
    old_setup_error = _setup_error(old)
    if exists and not force:
        if old is None:
            # Someone else (a person, another planner) answered it: never clobber their file.
            note = f"{response_path.name} exists but was not written by nexusd; kept it"
            return done("skipped", 0, raw.sha256, note)
        if old.get("request_sha256") == raw.sha256 and old_setup_error is None:
            return done("skipped", old_revision, raw.sha256, "already answered")
    revision = old_revision + 1
    after_write: list[Callable[[], object]] = []
    try:
        response = respond(
            raw,
            request_path=request_path,
            layout=layout,
            config=config,
            revision=revision,
            clock=clock,
            services=services,
            after_write=after_write,
            start=start,
        )
    except NexusError as exc:
        # Not the request's fault (e.g. a bad `planner.catalog`): a client waiting for the
        # response still gets one, marked `kind: setup` so the same content is answered
        # again once the configuration is fixed. The same failure is not written twice.
        same = exists and old is not None and old.get("request_sha256") == raw.sha256
        if same and old_setup_error == exc.message and not force:
            return done("error", old_revision, raw.sha256, str(exc))
        response = setup_error_response(
            exc,
            request_name=request_path.name,
            sha256=raw.sha256,
            revision=revision,
            created_at=_now(),
            timings=clock.timings,
        )
    text = render_response(response)
    clock.lap("render")
    if still_wanted is not None and not still_wanted():
        note = "it was deleted while it was answered; no response was written for it"
        return dataclasses.replace(done("skipped", 0, raw.sha256, note), gone=True)
    try:
        kept = write_response(response_path, kept_text(response, text), mode=RESPONSE_MODE)
    except OSError as exc:
        message = f"cannot write {response_path}: {exc.strerror or exc}"
        return done("error", revision, raw.sha256, message)
    clock.lap("write")
    if kept:
        response = with_kept(response, kept)
    error = response.meta.error
    if error is not None:
        outcome = done("error", revision, raw.sha256, error.message)
    else:
        outcome = done("ok", revision, raw.sha256)
        for then in after_write:
            try:
                then()
            except Exception:  # the answer is written; a failed memory write must not undo it
                log.exception("after answering %s", request_path)
    record(
        layout,
        {
            "event": "request",
            "request": response.meta.request_file,
            "status": outcome.status,
            "planner": response.meta.planner,
            "phases": dict(outcome.timings_ms),
        },
    )
    return dataclasses.replace(outcome, cycle=response.meta.cycle, title=response.title, kept=kept)


def with_kept(response: PlanResponse, kept: tuple[KeptFile, ...]) -> PlanResponse:
    """`response` with a warning for each file kept beside it."""
    warnings = response.meta.warnings + tuple(k.note() for k in kept)
    return dataclasses.replace(response, meta=dataclasses.replace(response.meta, warnings=warnings))


def kept_text(response: PlanResponse, text: str) -> TextFor:
    """The text of `response` (already rendered as `text`) given the files kept beside it."""
    return lambda kept: render_response(with_kept(response, kept)) if kept else text


def _setup_error(meta: Mapping[str, object] | None) -> str | None:
    """The message of a `kind: setup` error response (None for any other response)."""
    error = meta.get("error") if meta else None
    if meta is None or meta.get("status") != "error" or not isinstance(error, dict):
        return None
    message = error.get("message")
    return str(message) if error.get("kind") == "setup" else None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
