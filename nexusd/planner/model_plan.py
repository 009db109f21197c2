"""Phase 3b: when a model is routed to the architect, let it write the plan.

The offline sections are always computed first; the model's answer replaces
them section by section, and anything it gets wrong or leaves out comes from
the offline plan (see `llm_architect.plan_with_llm`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nexusd.config import Config
from nexusd.context.librarian import ContextBundle
from nexusd.context.relevant_code import code_snippets
from nexusd.models.routing import resolve_route
from nexusd.paths import RepoLayout
from nexusd.planner.architect import PLANNER_NAME
from nexusd.planner.clip import clip_middle
from nexusd.protocol.documents import PlanRequest, Section
from nexusd.sandbox.request_checks import CriticReport

Usage = tuple[tuple[str, str | int | float], ...]

# The goal as the `Request` context item repeats it: the task text of the prompt carries
# it whole (as far as it fits), so a pasted log is not sent twice.
REQUEST_ITEM_CHARS = 2000


def context_items(
    bundle: ContextBundle, sections: Sequence[Section], critic: CriticReport
) -> list[Any]:
    """The bundle as ranked prompt items: request, failures, facts, then the offline plan."""
    from nexusd.models.prompts import ContextItem

    items = [ContextItem("request", "Request", _request_text(bundle.request), 100.0)]
    for i, text in enumerate(critic.reflections):
        items.append(ContextItem("check", f"Failing check {i + 1}", text, 90.0 - i))
    for i, hit in enumerate(bundle.memory_hits):
        text = f"{hit.citation} ({hit.heading}): {hit.snippet}"
        items.append(ContextItem("memory", f"Memory {hit.citation}", text, 80.0 - i))
    for i, (label, text) in enumerate(code_snippets(bundle.root, bundle.code_hits)):
        items.append(ContextItem("code", label, text, 78.0 - i))
    git = bundle.git
    dirty = ", ".join(d.path for d in git.dirty[:20]) or "none"
    git_text = f"branch {git.branch or '(detached)'}, HEAD {git.head or '(unborn)'} "
    git_text += f"{git.head_subject!r}; dirty files: {dirty}"
    items.append(ContextItem("git", "Git facts", git_text, 75.0))
    for i, art in enumerate(bundle.artifacts):
        symbols = ", ".join(s.name for s in art.symbols[:30])
        text = f"{art.path}: {art.status}, {art.lines} lines; symbols: {symbols or '-'} {art.note}"
        items.append(ContextItem("artifact", art.path, text, 70.0 - i))
    for i, section in enumerate(sections):
        items.append(
            ContextItem("offline", f"Offline plan: {section.title}", section.body, 40.0 - i)
        )
    return items


def _request_text(request: PlanRequest) -> str:
    lines = [f"Goal: {clip_middle(request.goal, REQUEST_ITEM_CHARS)[0]}"]
    if request.cycle is not None:
        lines.append(f"Cycle: {request.cycle}")
    if request.previous_outcome:
        lines.append(f"Previous outcome: {request.previous_outcome}")
    lines += [f"Blocker: {b}" for b in request.blockers]
    lines += [f"Artifact: {a}" for a in request.artifacts]
    return "\n".join(lines)


def model_phase(
    layout: RepoLayout,
    config: Config,
    request: PlanRequest,
    *,
    bundle: ContextBundle,
    sections: tuple[Section, ...],
    critic: CriticReport,
) -> tuple[tuple[Section, ...], str, Usage, tuple[str, ...]]:
    """(sections, planner name, model usage, notes); offline routing returns its input at once."""
    if resolve_route(config, "architect").offline:
        return sections, PLANNER_NAME, (), ()
    from nexusd.planner.llm_architect import plan_with_llm

    plan = plan_with_llm(
        layout=layout,
        config=config,
        request=request,
        context_items=context_items(bundle, sections, critic),
        offline_sections=sections,
    )
    usage: Usage = ()
    if plan.usage is not None:
        usage = tuple(
            (str(k), v if isinstance(v, int | float) else str(v))
            for k, v in plan.usage.as_dict().items()
            if v is not None
        )
    planner = PLANNER_NAME if plan.fallback or plan.planner == "offline" else plan.planner
    return plan.sections, planner, usage, plan.notes
