"""Phases that ground a plan beyond the librarian's facts: a checkpoint and memory hits.

Both are optional and fail open: a request is still answered when git cannot
snapshot or the memory index is unavailable; the response says what was missing.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from nexusd.config import Config
from nexusd.context.recall import MemoryEvidence, recall_for
from nexusd.context.relevant_code import CodeFindings, code_phase, memory_named
from nexusd.memory.chunking import HEADING_SEP
from nexusd.paths import RepoLayout
from nexusd.protocol.documents import PlanRequest, Section
from nexusd.protocol.inline import inline_code
from nexusd.readonly import is_read_only
from nexusd.sandbox.request_checks import CriticReport, has_request_checks, run_critic

log = logging.getLogger("nexusd.grounding")

GOAL_HITS = 5
BLOCKER_HITS = 2
# Extra hits asked for, so dropping nexusd's own log lines still leaves enough to cite.
SPARE_HITS = 3
# The entries nexusd itself appends to daily notes (memory/daily.py, the commit hook):
# `## 14:02 cycle 3: ok`, `## 14:02 request: error`, `## 14:02 commit`. They say that a
# request was answered, never why: citing them as evidence only echoes the goal back.
_OWN_ENTRY = re.compile(r"^\d{1,2}:\d{2} (?:(?:cycle \d+|request): \w+|commit)$")


class Recall(Protocol):
    """Anything that searches memory like `MemoryService.search`."""

    def search(self, query: str, k: int | None = None, mode: str | None = None) -> Any: ...

    def search_many(self, queries: Sequence[tuple[str, int | None]]) -> list[Any]: ...


@dataclass(frozen=True)
class Services:
    """Long-lived helpers a daemon shares with the pipeline; each optional."""

    memory: Recall | None = None
    pool: Any = None  # nexusd.sandbox.pool.WarmPool
    code: Any = None  # nexusd.code.service.CodeIndex, kept fresh by the daemon
    # Write lessons from repeated check failures to MEMORY.md: the daemon's cycles only,
    # never a foreground `nexusd plan` (a manual run must not edit committed memory).
    learn: bool = False
    # What the response must say about these services, e.g. memory searched by keyword only.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckpointInfo:
    """The checkpoint a response names."""

    id: str
    commit: str
    restore_command: str


def checkpoint_phase(
    layout: RepoLayout, config: Config, request: PlanRequest
) -> tuple[CheckpointInfo | None, str | None]:
    """Snapshot the working tree for this request; (None, warning) when that fails."""
    if not config.checkpoint.on_request:
        return None, None
    from nexusd.checkpoint.snapshot import create_checkpoint

    trailers = {"request": request.path}
    if request.cycle is not None:
        trailers["cycle"] = str(request.cycle)
    try:
        cp = create_checkpoint(
            layout,
            reason="request",
            message=f"nexusd: before {request.path}",
            trailers=trailers,
            max_untracked_bytes=config.checkpoint.max_untracked_file_bytes,
        )
    except Exception as exc:  # never lose the answer because git could not snapshot
        log.exception("checkpoint for %s failed", request.path)
        return None, f"no checkpoint was made: {exc}"
    return CheckpointInfo(cp.id, cp.commit, cp.restore_command), None


def checkpoint_section(info: CheckpointInfo) -> Section:
    """How to get back to the state this plan was made on."""
    return Section(
        "Checkpoint",
        f"The working tree was snapshotted as `{info.id}` before planning.\n"
        f"To return to it: `{info.restore_command}` (a `pre-restore` checkpoint is taken "
        "first, so the restore can itself be undone; HEAD and the index are not touched).",
    )


def memory_queries(request: PlanRequest) -> list[tuple[str, str, int]]:
    """(label, query, k) for the goal, each blocker and each question asked."""
    queries = [("goal", request.goal, GOAL_HITS)]
    queries += [(f"blocker: {b}", b, BLOCKER_HITS) for b in request.blockers]
    q = request.questions
    for text in (q.analysis, q.plan, q.blocker_solutions, q.best_practices, q.tools):
        if text:
            queries.append(("question", text, BLOCKER_HITS))
    return queries


def is_own_log(hit: Any) -> bool:
    """Whether a memory hit is a line nexusd wrote about its own work (a daily-note entry)."""
    path = str(getattr(hit, "path", ""))
    heading = str(getattr(hit, "heading", "")).rsplit(HEADING_SEP, 1)[-1].strip()
    return path.startswith("memory/daily/") and bool(_OWN_ENTRY.match(heading))


def memory_phase(
    recall: Recall | None, request: PlanRequest
) -> tuple[tuple[MemoryEvidence, ...], str | None]:
    """Memory hits for the request, each cited once as `path:line`; a warning when degraded."""
    if recall is None:
        return (), None
    hits: dict[str, MemoryEvidence] = {}
    note: str | None = None
    try:
        asked = memory_queries(request)
        found = recall.search_many([(query[:2000], k + SPARE_HITS) for _, query, k in asked])
        for (label, _, k), results in zip(asked, found, strict=True):
            note = note or getattr(results, "note", None)
            for hit in [h for h in results.hits if not is_own_log(h)][:k]:
                seen = hits.get(hit.citation)
                if seen is None:
                    hits[hit.citation] = MemoryEvidence(
                        hit.citation, hit.heading, hit.snippet, hit.score, hit.category, (label,)
                    )
                elif label not in seen.found_for:
                    hits[hit.citation] = replace(seen, found_for=(*seen.found_for, label))
    except Exception as exc:
        log.exception("memory search failed")
        return tuple(hits.values()), f"memory search failed: {exc}"
    return tuple(hits.values()), note


def evidence_section(hits: Sequence[MemoryEvidence], note: str | None) -> Section | None:
    """`Evidence from memory`: each hit as `path:line`, its heading and a snippet."""
    if not hits:
        return None
    lines = []
    for hit in hits:
        snippet = " ".join(hit.snippet.split())
        why = ", ".join(hit.found_for)
        cited = inline_code(hit.citation)
        lines.append(f"- {cited} ({hit.heading or 'top'}; for {why}): {snippet}")
    if note:
        lines.append(f"\n_{note}_")
    return Section("Evidence from Memory", "\n".join(lines))


def with_lessons_first(
    sections: Sequence[Section], hits: Sequence[MemoryEvidence]
) -> tuple[Section, ...]:
    """Put the memory hits found for blockers at the top of `Blocker Solutions`."""
    relevant = [h for h in hits if any(f.startswith("blocker") for f in h.found_for)]
    if not relevant:
        return tuple(sections)
    lines = ["What this repository already learned about these blockers:"]
    for hit in relevant:
        lines.append(f"- {inline_code(hit.citation)}: {' '.join(hit.snippet.split())}")
    prefix = "\n".join(lines) + "\n\n"
    return tuple(
        Section(s.title, prefix + s.body) if s.title == "Blocker Solutions" else s for s in sections
    )


@dataclass(frozen=True)
class Grounding:
    """What the checkpoint, critic and memory phases found for one request."""

    checkpoint: CheckpointInfo | None = None
    critic: CriticReport = field(default_factory=CriticReport)
    hits: tuple[MemoryEvidence, ...] = ()
    memory_note: str | None = None
    code: CodeFindings = field(default_factory=CodeFindings)
    warnings: tuple[str, ...] = ()
    timings_ms: Mapping[str, float] = field(default_factory=dict)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


def _snapshot_and_check(
    layout: RepoLayout,
    config: Config,
    request: PlanRequest,
    services: Services,
    read_only: bool = False,
) -> tuple[CheckpointInfo | None, str | None, CriticReport, dict[str, float]]:
    start = time.perf_counter()
    # Read-only (`plan --stdout`): the checks run on the working tree as it is, and no
    # checkpoint is made for them (nor are their results attached to one).
    checkpoint, warning = (None, None) if read_only else checkpoint_phase(layout, config, request)
    timings = {"checkpoint": _ms(start)}
    critic = CriticReport()
    if has_request_checks(config):
        start = time.perf_counter()
        critic = run_critic(
            layout,
            config,
            treeish=checkpoint.commit if checkpoint else None,
            checkpoint_id=checkpoint.id if checkpoint else None,
            pool=services.pool,
            learn=services.learn and not read_only,
            request_key=f"{request.path}@{request.sha256}",
        )
        timings["critic"] = _ms(start)
    return checkpoint, warning, critic, timings


def _recall(
    layout: RepoLayout, request: PlanRequest, services: Services
) -> tuple[tuple[MemoryEvidence, ...], str | None, float]:
    start = time.perf_counter()
    hits, note = memory_phase(services.memory or recall_for(layout), request)
    return hits, note, _ms(start)


@contextlib.contextmanager
def grounding(
    layout: RepoLayout, config: Config, request: PlanRequest, services: Services
) -> Iterator[Callable[[], Grounding]]:
    """Run checkpoint (+ checks), memory and code search beside the librarian; yield the
    collector.

    The phases need only the request, and each mostly waits on git, a sandbox or an
    index, so running them at once keeps a response's latency close to the slowest.
    """
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="nexusd-phase") as pool:
        snap = pool.submit(_snapshot_and_check, layout, config, request, services, is_read_only())
        recalled = pool.submit(_recall, layout, request, services)
        # In this request's context: a model rerank there shares the request's model budget.
        ctx = contextvars.copy_context()
        located = pool.submit(ctx.run, code_phase, layout, config, request, services.code)

        def collect() -> Grounding:
            checkpoint, warning, critic, timings = snap.result()
            hits, note, memory_ms = recalled.result()
            code = memory_named(located.result(), hits)
            return Grounding(
                checkpoint=checkpoint,
                critic=critic,
                hits=hits,
                memory_note=note,
                code=code,
                warnings=tuple(w for w in (warning, code.note) if w)
                + critic.warnings
                + services.warnings,
                timings_ms={**timings, "memory": memory_ms, "code": code.ms},
            )

        yield collect
