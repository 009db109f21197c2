"""The librarian's code phase: the files and functions a request is about, from the code index.

The daemon keeps the index fresh and passes it in; without a daemon the index is opened in
this process and brought up to date first (only changed blobs are parsed). Fails open: a
request is answered without code when the index cannot be used, and the response says why.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nexusd.code.boilerplate import title as report_title
from nexusd.config import Config
from nexusd.context.llm_librarian import librarian_configured, rerank_files
from nexusd.context.recall import MemoryEvidence
from nexusd.paths import RepoLayout
from nexusd.protocol.documents import PlanRequest, Section
from nexusd.protocol.inline import inline_code, inline_codes

if TYPE_CHECKING:  # numpy and LanceDB load only when a request is answered
    from nexusd.code.rank import FileHit
    from nexusd.code.service import CodeIndex
    from nexusd.sandbox.reproduce import Reproduction

log = logging.getLogger("nexusd.code")
MAX_UNITS_SHOWN = 3
# What a model's prompt gets of the code: the best unit of the first few files, cut short.
MAX_SNIPPET_FILES = 5
MAX_SNIPPET_LINES = 40
MAX_SNIPPET_FILE_BYTES = 4_000_000
# How long a plan waits for a first build that is under way before answering without it.
FIRST_BUILD_WAIT_S = 1.0

_local: dict[str, CodeIndex] = {}
_local_lock = threading.Lock()


@dataclass(frozen=True)
class CodeFindings:
    """Ranked files and a note when the index was incomplete."""

    hits: tuple[FileHit, ...] = ()
    note: str | None = None
    ms: float = 0.0
    reproduction: str | None = None  # what running the request's code did, when it was run
    tests: tuple[FileHit, ...] = ()  # the best tests of the whole ranking, for the test step


def query_text(request: PlanRequest) -> tuple[str, str]:
    """(text, title) to search code by: goal, blockers, previous outcome, delta, questions;
    the title is the goal's first line with words past a template's markup, a salutation and
    lines that only say there is a report (`boilerplate.title`), or the first blocker's when
    the goal has none (`Fix the bug below`)."""
    q = request.questions
    parts = [
        request.goal,
        *request.blockers,
        request.previous_outcome or "",
        request.scratchpad_delta or "",
        *(text or "" for text in (q.analysis, q.plan, q.blocker_solutions)),
    ]
    titles = (report_title(part) for part in (request.goal or "", *request.blockers))
    return "\n".join(p for p in parts if p), next((t for t in titles if t), "")


def local_index(
    layout: RepoLayout, config: Config, progress: Callable[[int, int], None] | None = None
) -> CodeIndex:
    """This process's index of the repository, up to date with the working tree."""
    from nexusd.code.service import CodeIndex

    key = str(layout.root)
    with _local_lock:
        index = _local.get(key)
        if index is None:
            index = _local[key] = CodeIndex(layout, config)
    index.update(progress)
    return index


def code_phase(
    layout: RepoLayout, config: Config, request: PlanRequest, index: CodeIndex | None
) -> CodeFindings:
    """Search the code index for the request; empty findings and a note on failure."""
    if not config.code.enabled:
        return CodeFindings()
    start = time.perf_counter()
    try:
        found = index if index is not None else local_index(layout, config)
        if not found.complete:
            # The daemon's first build of a small repository takes a fraction of a second:
            # worth waiting for, briefly; a large one answers with what is there, and says so.
            found.wait_settled(FIRST_BUILD_WAIT_S)
        text, title = query_text(request)
        ran = reproduced(layout, config, text, found)
        results = found.search(
            text,
            config.code.max_results,
            title=title,
            ran=ran.files if ran is not None else None,
            ran_lines=ran.lines if ran is not None else None,
            recursion=ran.recursion if ran is not None else None,
        )
    except Exception as exc:  # never lose the answer because the code index failed
        log.exception("code search for %s failed", request.path)
        return CodeFindings(note=f"code search failed: {exc}")
    hits = tuple(results.hits)
    if librarian_configured(config):
        # The model sees the index's best candidates and may reorder them; any failure
        # leaves the index's order (rerank_files returns None).
        reranked = rerank_files(layout=layout, config=config, request_text=text, hits=hits)
        hits = reranked if reranked is not None else hits
    ms = round((time.perf_counter() - start) * 1000.0, 3)
    note = results.note or (ran.warning if ran is not None else None)
    summary = ran.summary() if ran is not None else None
    return CodeFindings(hits, note, ms, summary, results.tests)


def reproduced(
    layout: RepoLayout, config: Config, text: str, index: CodeIndex | None = None
) -> Reproduction | None:
    """The request's own code run in the sandbox (`code.reproduce`); None when it shows none,
    the setting is off, the repository is not Python's (the tracer runs Python), or running
    it failed (logged: the plan goes on without it).

    `index` says where the names the code uses but never binds are defined, so that a
    snippet written against an off-screen `from pkg.sub import Name` still runs."""
    from nexusd.code.snippet import free_names, runnable
    from nexusd.context.toolchain import detect
    from nexusd.sandbox.reproduce import reproduce

    if config.code.reproduce.mode == "off":
        return None
    try:
        snippet = runnable(text)
        if snippet.is_empty():
            return None
        if detect(layout.root).language != "python":
            # The tracer runs Python: a Go or Rust report's `--max-results` or `-Infinity`
            # run as Python says nothing about the code (a NameError each).
            return None
        known = index.import_lines(free_names(snippet)) if index is not None else {}
        return reproduce(layout, config, snippet.prelude, snippet.statements, known)
    except Exception:
        log.exception("running the request's code failed")
        return None


def memory_named(findings: CodeFindings, memory_hits: Sequence[MemoryEvidence]) -> CodeFindings:
    """The code findings with the files that recalled memory names moved up, with the reason.

    A lesson or decision that names a file (`src/app/auth.py`, `auth.py:12`) is what the
    repository learned about where such work happens; it lifts that file by half the best
    file's score, enough to pass the files that only share words with the request.
    """
    from nexusd.code.query import mine

    if not findings.hits or not memory_hits:
        return findings
    named: dict[str, str] = {}
    for hit in memory_hits:
        text = f"{hit.heading}\n{hit.snippet}"
        for raw in mine(text).paths:
            tail = raw.strip("./")
            for file_hit in findings.hits:
                if file_hit.path == tail or file_hit.path.endswith("/" + tail):
                    named.setdefault(file_hit.path, inline_code(hit.citation))
    if not named:
        return findings
    lift = 0.5 * max(h.score for h in findings.hits)
    moved = [
        replace(
            h,
            score=round(h.score + lift, 4),
            reasons=(f"named in memory at {named[h.path]}", *h.reasons),
        )
        if h.path in named
        else h
        for h in findings.hits
    ]
    moved.sort(key=lambda h: -h.score)
    return replace(findings, hits=tuple(moved))


def code_snippets(root: Path, hits: tuple[FileHit, ...]) -> list[tuple[str, str]]:
    """(label, text) of the best unit of the top files, for a model's prompt: small and cited."""
    from nexusd.code.reader import read_inside

    out: list[tuple[str, str]] = []
    for hit in hits[:MAX_SNIPPET_FILES]:
        if not hit.units:
            continue
        unit = hit.units[0]
        # Never through a symlink, never outside the repository: the index's own rule.
        data = read_inside(root, hit.path, MAX_SNIPPET_FILE_BYTES)
        if isinstance(data, str):
            continue
        lines = data.decode("utf-8", errors="replace").split("\n")
        last = min(unit.end, unit.start + MAX_SNIPPET_LINES - 1)
        body = "\n".join(lines[unit.start - 1 : last])
        more = f"\n… ({unit.end - last} more lines)" if unit.end > last else ""
        why = "; ".join(hit.reasons[:2])
        label = f"Code {hit.path}:{unit.start} {unit.qualname}"
        out.append((label, f"{hit.path}:{unit.start}-{last} ({why})\n{body}{more}"))
    return out


def relevant_code_section(
    hits: tuple[FileHit, ...], reproduction: str | None = None
) -> Section | None:
    """`## Relevant Code`: ranked files as `path:line`, their best units, and why each ranks;
    first, what running the request's code did, when it was run."""
    if not hits:
        return None
    lines = [
        "Ranked by the code index (names the request uses that the code defines, paths, "
        "stack frames and messages it quotes, shared rare words, imports); most likely first."
    ]
    if reproduction:
        lines.append(reproduction)
    for number, hit in enumerate(hits, start=1):
        line = hit.units[0].start if hit.units else 1
        why = "; ".join(hit.reasons[:3]) or "shares words with the request"
        lines.append(f"{number}. {inline_code(f'{hit.path}:{line}')} — {why}")
        for unit in hit.units[:MAX_UNITS_SHOWN]:
            said = [f"mentions {inline_codes(unit.reasons)}"] if unit.reasons else []
            if unit.ran:
                said.append("the request's code ran it")
            words = f" ({'; '.join(said)})" if said else ""
            where = inline_code(f"{hit.path}:{unit.start}")
            lines.append(f"   - {where} {unit.kind} {inline_code(unit.qualname)}{words}")
    return Section("Relevant Code", "\n".join(lines))
