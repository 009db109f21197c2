"""Phase 2b, the critic: run the `when: request` checks on the request's snapshot and learn.

Results are attached to the checkpoint as a git note, failures are reflected on
(what failed, where, the likely cause, the next step), and recurring failures or
fixed ones are appended to MEMORY.md as lessons and crystallized solutions.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nexusd.config import Config
from nexusd.paths import RepoLayout
from nexusd.protocol.documents import Section

log = logging.getLogger("nexusd.critic")
# Checks for requests (the worker) and for commits (the inbox) run one at a time: they
# share the machine's cores and the sandbox's limits are per run.
_ONE_AT_A_TIME = threading.Lock()


@dataclass(frozen=True)
class CriticReport:
    """What the checks said about the snapshot a request was answered on."""

    results: tuple[Any, ...] = ()  # nexusd.sandbox.result.CheckResult
    statuses: tuple[tuple[str, str], ...] = ()
    reflections: tuple[str, ...] = ()
    lessons: tuple[str, ...] = ()  # markdown appended to MEMORY.md once the answer is written
    warnings: tuple[str, ...] = ()
    # Records the results and writes `lessons` to MEMORY.md: called only once the response
    # is on disk, so only answered cycles count (None when this run does not learn).
    learn: Callable[[], tuple[str, ...]] | None = None


def has_request_checks(config: Config) -> bool:
    """True when some configured check runs for each request."""
    # load_config normalises `when` to a list (default ["request"]).
    return any("request" in check["when"] for check in config.checks)


def run_critic(
    layout: RepoLayout,
    config: Config,
    *,
    treeish: str | None,
    checkpoint_id: str | None,
    when: str = "request",
    pool: Any = None,
    learn: bool = True,
    request_key: str = "",
) -> CriticReport:
    """Run the checks for `when` on `treeish`; never raises (a failure becomes a warning).

    `learn`: record the results and write lessons to MEMORY.md. Only the daemon's cycles
    learn; a foreground run (`nexusd plan`) reports the results and writes nothing.
    `request_key` names the request answered (path@sha256): answering the same request
    again is not another attempt."""
    from nexusd.sandbox.reflection import reflect
    from nexusd.sandbox.runner import attach_results, fallback_notes, run_checks

    warnings: list[str] = []
    try:
        with _ONE_AT_A_TIME:
            results = run_checks(layout, config, treeish=treeish, when=when, pool=pool)
    except Exception as exc:  # the plan is still worth writing without checks
        log.exception("checks failed to run")
        return CriticReport(warnings=(f"checks could not run: {exc}",))
    if not results:
        return CriticReport()
    if checkpoint_id is not None:
        try:
            attach_results(layout, checkpoint_id, results)
        except Exception as exc:
            warnings.append(f"could not attach check results to {checkpoint_id}: {exc}")
    if any(not r.isolated for r in results):
        warnings.append("checks ran as a plain subprocess, NOT isolated: run `nexusd doctor`")
    warnings.extend(fallback_notes(results))  # `auto` left docker: say so in every response
    reflections = tuple(reflect(r) for r in results if r.status != "passed")
    lessons = (
        _learn(layout, config, results, warnings, request_key=request_key, record=False)
        if learn
        else ()
    )

    def commit() -> tuple[str, ...]:
        return _learn(layout, config, results, [], request_key=request_key, record=True)

    return CriticReport(
        results=results,
        statuses=tuple((r.name, r.status) for r in results),
        reflections=reflections,
        lessons=lessons,
        warnings=tuple(warnings),
        learn=commit if learn else None,
    )


def _learn(
    layout: RepoLayout,
    config: Config,
    results: Sequence[Any],
    warnings: list[str],
    *,
    request_key: str,
    record: bool,
) -> tuple[str, ...]:
    """The lessons these results trigger; with `record`, also recorded and written."""
    from nexusd.memory.writes import add_memory
    from nexusd.sandbox.lessons import OWN_PATHS, pending_lessons

    own = (*OWN_PATHS, *(str(p) for p in config.watch.paths))
    written: list[str] = []
    try:
        found = pending_lessons(layout, results, own=own, request=request_key, record=record)
        for lesson in found:
            category = "Lessons" if lesson.kind == "lesson" else "Solutions"
            if record:
                tags = ("checks", lesson.check)
                add_memory(layout, lesson.markdown, category=category, tags=tags)
            written.append(lesson.markdown)
    except Exception as exc:
        warnings.append(f"could not record lessons from the checks: {exc}")
    return tuple(written)


def checks_section(report: CriticReport) -> Section | None:
    """The response's `Checks` section: a table of results, then a reflection per failure."""
    if not report.results:
        return None
    rows = ["| check | status | backend | exit | time |", "| --- | --- | --- | --- | --- |"]
    for r in report.results:
        backend = r.backend if r.isolated else f"{r.backend} (NOT isolated)"
        exit_code = "-" if r.exit_code is None else str(r.exit_code)
        rows.append(f"| {r.name} | {r.status} | {backend} | {exit_code} | {r.duration_ms} ms |")
    parts = ["\n".join(rows), *report.reflections]
    if report.lessons:
        parts.append(f"{len(report.lessons)} lesson(s) from these results were added to MEMORY.md.")
    return Section("Checks", "\n\n".join(parts))
