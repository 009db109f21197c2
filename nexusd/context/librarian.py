"""Phase 1, the librarian: gather the facts a plan is grounded in into a context bundle.

The bundle holds facts only, no reasoning. Later phases add fields (memory hits,
checkpoint, check results) by `dataclasses.replace`, so the bundle stays frozen.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexusd.config import Config
from nexusd.context.artifacts import ArtifactFact, Hit, find_mentions, inspect_artifact
from nexusd.context.catalog import Match, Practice, load_catalog, match_practices
from nexusd.context.gitfacts import OWN_PATHS, GitFacts, collect_git_facts
from nexusd.context.goaltext import topic
from nexusd.context.history import Lineage, PreviousCycle, find_previous, read_previous
from nexusd.context.intent import Intent, classify_text
from nexusd.context.keywords import keywords
from nexusd.context.recall import MemoryEvidence
from nexusd.context.toolchain import PYTHON, Toolchain, detect
from nexusd.context.toolsfile import ToolsFacts, read_tools_file
from nexusd.memory.sources import memory_globs
from nexusd.protocol.documents import PlanRequest
from nexusd.protocol.inline import inline_code
from nexusd.protocol.naming import request_timestamp
from nexusd.protocol.render import read_response_meta

if TYPE_CHECKING:  # numpy loads only when the code index is used
    from nexusd.code.rank import FileHit

# Bounds that keep one answer fast however large the request is.
MAX_ARTIFACTS = 20
MAX_BLOCKERS = 10
DEFAULT_INTENT = Intent("feature")


@dataclass(frozen=True)
class BlockerFacts:
    """One blocker, the words it was searched by, and the artifact lines that mention them."""

    text: str
    words: tuple[str, ...]
    evidence: tuple[Hit, ...]
    practices: tuple[Match, ...]


@dataclass(frozen=True)
class ContextBundle:
    """Everything the architect may use: the request and facts about the repository."""

    request: PlanRequest
    request_rel: str  # the request's path relative to the repository
    response_rel: str
    root: Path
    gathered_at: str
    git: GitFacts
    artifacts: tuple[ArtifactFact, ...]
    blockers: tuple[BlockerFacts, ...]
    previous: PreviousCycle | None
    tools: ToolsFacts
    practices: tuple[Match, ...]
    goal_words: tuple[str, ...]
    goal_evidence: tuple[Hit, ...]
    intent: Intent = DEFAULT_INTENT  # the kind of work the goal asks for
    toolchain: Toolchain = PYTHON  # the repository's test, trace and profile commands
    checks: tuple[Mapping[str, Any], ...] = ()  # configured checks (name, run)
    catalog: tuple[Practice, ...] = ()  # the best-practice catalog in use
    warnings: tuple[str, ...] = ()
    # Filled by later phases (memory, checkpoint, critic); empty in the offline pipeline.
    memory_hits: tuple[MemoryEvidence, ...] = ()
    code_hits: tuple[FileHit, ...] = ()  # best first
    code_tests: tuple[FileHit, ...] = ()  # the best tests of the whole ranking
    checkpoint: str | None = None
    check_results: tuple[tuple[str, str], ...] = ()
    timings_ms: Mapping[str, float] = field(default_factory=dict)


def _rel(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _order_key(name: str) -> tuple[int, str]:
    stamp = request_timestamp(name)
    if stamp is not None:
        try:
            return (0, stamp.astimezone(UTC).isoformat())
        except (OverflowError, ValueError):
            pass  # an instant out of datetime's range: ordered like a name without one
    # Names without a timestamp sort by name, after timestamped ones of the same folder.
    return (1, name)


def _artifact_list(request: PlanRequest) -> list[tuple[str, str]]:
    notes = dict(request.artifact_notes)
    out: dict[str, str] = {path: notes.get(path, "") for path in request.artifacts}
    for path, note in request.artifact_notes:
        out.setdefault(path, note)
    return list(out.items())


def gather(
    request: PlanRequest,
    request_path: Path,
    root: Path,
    config: Config,
    response_path: Path,
    *,
    own: Sequence[str] = OWN_PATHS,
) -> ContextBundle:
    """Collect git facts, artifacts, blocker evidence, the previous cycle, tools and practices;
    `own` are nexusd's own files, which are not the user's uncommitted changes."""
    timings: dict[str, float] = {}
    mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        timings[name] = (now - mark) * 1000.0
        mark = now

    listed = _artifact_list(request)
    # The memory files as configured: their sections need roles, and a plan quotes artifacts.
    memory = memory_globs(config)
    artifacts = tuple(
        inspect_artifact(root, path, note, memory_globs=memory)
        for path, note in listed[:MAX_ARTIFACTS]
    )
    lap("artifacts")
    inside = [a.rel for a in artifacts if a.rel is not None and a.status != "refused"]
    git = collect_git_facts(root, inside, own)
    lap("git")

    catalog = load_catalog(root, config.planner.catalog)
    blockers = []
    for text in request.blockers[:MAX_BLOCKERS]:
        words = keywords(topic(text))
        blockers.append(
            BlockerFacts(
                text=text,
                words=words,
                evidence=find_mentions(artifacts, words),
                practices=match_practices(catalog, topic(text), limit=2, minimum=0),
            )
        )
    q = request.questions
    subject = " ".join(
        filter(None, [request.goal, *request.blockers, request.previous_outcome, q.best_practices])
    )
    practices = match_practices(catalog, topic(subject))
    goal_words = keywords(topic(request.goal))
    goal_evidence = find_mentions(artifacts, goal_words, limit=6)
    lap("evidence")

    lineage = Lineage(request.cycle, request.goal, request.previous_goal or "")
    prev_path, source, note = find_previous(
        root,
        request_path,
        request.history_path,
        _order_key,
        lineage=lineage,
        meta_reader=read_response_meta,
    )
    previous = (
        read_previous(root, prev_path, source, read_response_meta, note) if prev_path else None
    )
    tools = read_tools_file(root, request.tools_file)
    lap("history")
    toolchain = detect(root)
    lap("toolchain")

    warnings = list(request.warnings)
    if len(request.blockers) > MAX_BLOCKERS:
        warnings.append(
            f"only the first {MAX_BLOCKERS} of {len(request.blockers)} blockers were searched"
        )
    if len(listed) > MAX_ARTIFACTS:
        warnings.append(f"only the first {MAX_ARTIFACTS} of {len(listed)} artifacts were read")
    if note and previous is None:
        warnings.append(note)
    for art in artifacts:
        if art.status == "refused":
            warnings.append(f"artifact {inline_code(art.path)} {art.note}")
    if git.error:
        warnings.append(f"git facts unavailable: {git.error}")
    return ContextBundle(
        request=request,
        request_rel=_rel(root, request_path),
        response_rel=_rel(root, response_path),
        root=root,
        gathered_at=datetime.now(UTC).isoformat(timespec="seconds"),
        git=git,
        artifacts=artifacts,
        blockers=tuple(blockers),
        previous=previous,
        tools=tools,
        practices=practices,
        goal_words=goal_words,
        goal_evidence=goal_evidence,
        intent=classify_text(request.goal),
        toolchain=toolchain,
        checks=tuple(dict(c) for c in config.checks),
        catalog=catalog,
        warnings=tuple(warnings),
        timings_ms=timings,
    )
