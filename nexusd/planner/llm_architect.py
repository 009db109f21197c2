"""The architect backed by a language model, never worse than the offline planner.

`plan_with_llm` asks the routed model for a JSON plan grounded in the ranked
context, validates it, gives an invalid answer one repair round with the
validation errors, and fills whatever is still missing from the offline
planner's sections, saying so in the notes. A provider that is down, slow or
wrong costs at most the request's time box and yields the offline plan.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nexusd.config import Config
from nexusd.errors import NexusError
from nexusd.models.answers import parse_json_answer
from nexusd.models.budget import current_budget
from nexusd.models.prompts import ContextItem, build_prompt, estimate_tokens
from nexusd.models.registry import Message
from nexusd.models.reliability import BREAKERS, BreakerBoard
from nexusd.models.routed import RoutedModel
from nexusd.models.routing import limits, resolve_route
from nexusd.models.telemetry import Usage, record
from nexusd.paths import RepoLayout
from nexusd.planner import llm_schema as schema
from nexusd.planner.clip import task_within
from nexusd.planner.llm_render import FIELD_LABEL, FIELD_SECTION, answer_bodies
from nexusd.protocol.documents import STANDARD_SECTIONS, PlanRequest, Section
from nexusd.protocol.inline import inline_code

SYSTEM = (
    "You are the architect of a software project's planner. You read the context and "
    "write a plan for the executor (a person or a coding agent); you never write the code. "
    "Ground every statement in the context: name real files, real commands, real symbols. "
    "Answer with exactly one JSON object and nothing else."
)

_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
_TIME_BOX = re.compile(r"(\d+(?:\.\d+)?)\s*(h|hours?|hrs?|m|mins?|minutes?|s|secs?|seconds?)\b")


@dataclass(frozen=True)
class LlmPlan:
    """The sections to answer with, who wrote them, the model usage and what happened."""

    sections: tuple[Section, ...]
    planner: str
    usage: Usage | None = None
    notes: tuple[str, ...] = ()
    fallback: bool = False


def time_box_seconds(text: str | None) -> float | None:
    """Seconds in a time box such as `45m`, `1h 30m` or `2 hours` (None if none given)."""
    if not text:
        return None
    found = _TIME_BOX.findall(text.lower())
    return sum(float(n) * _UNITS[unit[0]] for n, unit in found) or None


def _task_text(request: PlanRequest) -> str:
    lines = [f"# Goal\n\n{request.goal.strip()}"]
    facts = [
        ("Cycle", request.cycle),
        ("Project", request.project),
        ("Previous goal", request.previous_goal),
        ("Previous outcome", request.previous_outcome),
        ("Time box", request.time_box),
    ]
    lines.extend(f"- {name}: {value}" for name, value in facts if value not in (None, ""))
    if request.blockers:
        lines.append("\n## Current blockers\n" + "\n".join(f"- {b}" for b in request.blockers))
    if request.artifacts:
        lines.append("\n## Relevant artifacts\n" + "\n".join(f"- {a}" for a in request.artifacts))
    asked = [(k, v) for k, v in vars(request.questions).items() if v]
    if asked:
        lines.append("\n## Executor questions\n" + "\n".join(f"- {k}: {v}" for k, v in asked))
    return "\n".join(lines)


def _instructions(titles: Sequence[str], standard: bool, max_actions: int) -> tuple[str, Any]:
    if standard:
        spec = schema.architect_schema(max_actions)
        text = (
            f"Answer with one JSON object with the keys {', '.join(schema.FIELDS)}. "
            f"`actions` holds 1 to {max_actions} atomic steps, each with `title`, `details`, "
            "`target_files` (paths) and `verify` (the command or check that proves it done). "
            "Solve every listed blocker in `blocker_solutions`. JSON schema:\n"
        )
    else:
        spec = schema.sections_schema(titles)
        text = (
            'Answer with one JSON object {"sections": {TITLE: MARKDOWN}} whose keys are '
            f"exactly these section titles: {', '.join(titles)}. JSON schema:\n"
        )
    return text + schema.schema_text(spec), spec


def _valid_parts(
    answer: Mapping[str, Any] | None,
    titles: Sequence[str],
    standard: bool,
    request: PlanRequest,
    max_actions: int,
) -> tuple[dict[str, Any], list[str]]:
    if answer is None:
        return {}, []
    if standard:
        bad = schema.field_errors(
            answer, max_actions=max_actions, need_blockers=bool(request.blockers)
        )
        parts = {f: answer[f] for f in schema.FIELDS if f in answer and f not in bad}
        return parts, [m for f in schema.FIELDS for m in bad.get(f, [])]
    bad = schema.section_errors(answer, titles)
    sections = answer.get("sections") if isinstance(answer.get("sections"), dict) else {}
    assert isinstance(sections, dict)
    parts = {t: sections[t] for t in titles if t not in bad}
    return parts, [m for t in titles for m in bad.get(t, [])]


def plan_with_llm(
    *,
    layout: RepoLayout,
    config: Config,
    request: PlanRequest,
    context_items: Sequence[ContextItem],
    offline_sections: Sequence[Section],
    breakers: BreakerBoard = BREAKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> LlmPlan:
    """Plan with the architect's routed model; offline sections fill every gap."""
    offline = {s.title: s.body for s in offline_sections}
    titles = request.requested_sections or STANDARD_SECTIONS
    standard = not request.requested_sections

    shortened: list[str] = []  # said in every outcome once the prompt is built

    def fallback(
        reason: str, usage: Usage | None = None, planner: str = "offline", why: str = "down"
    ) -> LlmPlan:
        note = {
            "down": f"provider down: fell back to the offline planner ({reason})",
            "slow": "provider slow: no answer within the time box, fell back to the offline"
            f" planner ({reason})",
            "unusable": f"the model's answer was unusable, used the offline planner ({reason})",
            "spent": reason,
        }[why]
        notes = (*shortened, note)
        _log(layout, request, planner, usage, ok=False, fallback=True, notes=notes)
        return LlmPlan(tuple(offline_sections), "offline", usage, notes, fallback=True)

    try:
        route = resolve_route(config, "architect")
        if route.offline:
            return LlmPlan(tuple(offline_sections), "offline")
        budget = current_budget()
        if budget is not None and budget.spent():
            # Asking now would only make the answer late: the whole answer's time is gone.
            return fallback(budget.spent_note(), planner=route.planner_name, why="spent")
        lim = limits(config)
        box = time_box_seconds(request.time_box)
        session = RoutedModel(
            layout,
            route,
            deadline_s=min(lim.timeout_s, box) if box else lim.timeout_s,
            max_retries=lim.max_retries,
            breakers=breakers,
            sleep=sleep,
        )
    except NexusError as exc:
        return fallback(exc.message)
    max_actions = config.planner.max_actions
    instructions, spec = _instructions(titles, standard, max_actions)
    budget_tokens = limits(config).max_context_tokens
    reserved = estimate_tokens(SYSTEM) + estimate_tokens(instructions)
    task, task_cut = task_within(_task_text(request), budget_tokens, reserved)
    if task_cut:
        shortened.append(
            f"the request is too long for the model's context (`planner.max_context_tokens`"
            f" {budget_tokens}): {task_cut} of its characters were left out of the prompt"
        )
    prompt = build_prompt(
        system=SYSTEM,
        task=task,
        instructions=instructions,
        items=context_items,
        budget_tokens=budget_tokens,
    )
    cut = (
        *(["request (shortened)"] if task_cut else []),
        *(f"{t} (shortened)" for t in prompt.truncated),
        *prompt.dropped,
    )
    text, reason = session.ask(prompt.messages, "first", spec, cut)
    if text is None:
        why = "unusable" if session.echoed else "slow" if session.slow else "down"
        return fallback(reason, session.usage, route.planner_name, why)
    answer, errors = parse_json_answer(text)
    parts, field_errs = _valid_parts(answer, titles, standard, request, max_actions)
    errors = errors or field_errs
    notes: list[str] = list(shortened)
    if errors:
        repair = (
            "Your answer did not validate:\n"
            + "\n".join(f"- {e}" for e in errors[:20])
            + "\nAnswer again with the complete, corrected JSON object only."
        )
        messages = (*prompt.messages, Message("assistant", text), Message("user", repair))
        fixed, reason = session.ask(messages, "repair", spec, cut)
        if fixed is None:
            notes.append(f"the repair round failed ({reason})")
        else:
            again, _ = parse_json_answer(fixed)
            parts.update(_valid_parts(again, titles, standard, request, max_actions)[0])
    if standard:
        bodies = answer_bodies(parts, {})
        missing = [f for f in schema.FIELDS if f not in parts]
        notes.extend(
            f"the model's answer lacked {FIELD_LABEL[f]}"
            + ("; filled from the offline planner" if f in FIELD_SECTION else "")
            for f in missing
        )
    else:
        bodies = {t: str(parts[t]).strip() for t in parts}
        notes.extend(
            f"the model's answer lacked section {inline_code(t)}; filled from the offline planner"
            for t in titles
            if t not in parts
        )
    if not bodies:
        return fallback("; ".join(errors[:3]), session.usage, route.planner_name, "unusable")
    sections = tuple(Section(t, bodies.get(t) or offline.get(t, "")) for t in titles)
    _log(layout, request, route.planner_name, session.usage, ok=True, fallback=False, notes=notes)
    return LlmPlan(sections, route.planner_name, session.usage, tuple(notes))


def _log(
    layout: RepoLayout,
    request: PlanRequest,
    planner: str,
    usage: Usage | None,
    *,
    ok: bool,
    fallback: bool,
    notes: Sequence[str],
) -> None:
    record(
        layout,
        {
            "event": "plan",
            "role": "architect",
            "request": request.path,
            "planner": planner,
            "ok": ok,
            "fallback": fallback,
            "notes": list(notes),
            "usage": usage.as_dict() if usage else None,
        },
    )
