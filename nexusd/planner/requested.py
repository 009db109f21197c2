"""Sections a request explicitly asks for, filled from the same facts as the standard six."""

from __future__ import annotations

import re
from collections.abc import Callable

from nexusd.context.librarian import ContextBundle
from nexusd.planner.actions import Action, check_commands, goal_line, short
from nexusd.planner.architect import (
    OFFLINE_NOTE,
    analysis,
    best_practices,
    blocker_solutions,
    checklist,
    plan_section,
    tool_calls,
)
from nexusd.planner.sequence import plan_actions
from nexusd.protocol.documents import Section

Writer = Callable[[ContextBundle, tuple[Action, ...]], str]


def success_criteria(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    """Checkable statements that say the goal is met, one per verification in the plan."""
    lines = [f"The goal is met when all of these hold: “{goal_line(bundle, 200)}”", ""]
    for action in actions[1:-1]:
        lines.append(f"- [ ] {action.title}: {action.verify}.")
    for blocker in bundle.blockers:
        lines.append(f"- [ ] “{short(blocker.text, 100)}” no longer happens in a repeated run.")
    lines.append("- [ ] The checks pass: " + "; ".join(check_commands(bundle)) + ".")
    lines.append("- [ ] Only the planned files changed (`git diff --stat`).")
    return "\n".join(lines)


def next_steps(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    """The first actions to take now, then the end-of-cycle checklist."""
    first = [f"{i}. {a.title}." for i, a in enumerate(actions[:3], start=1)]
    return "\n".join(["Start with:", *first, "", "Then:", checklist(bundle, actions)])


def _analysis(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    return analysis(bundle)


def _plan(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    return plan_section(actions, bundle)


def _blockers(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    return blocker_solutions(bundle)


def _practices(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    return best_practices(bundle)


def _tools(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    return tool_calls(bundle)


# Checked in order: the first pattern found in the heading decides what fills it.
KINDS: tuple[tuple[re.Pattern[str], Writer], ...] = (
    (re.compile(r"success|criteri|acceptance|verif|definition of done"), success_criteria),
    (re.compile(r"next step|action item|follow|checklist|todo|to-do"), next_steps),
    (re.compile(r"blocker|risk|obstacle|issue"), _blockers),
    (re.compile(r"practice|mental model|lesson|guideline"), _practices),
    (re.compile(r"tool|command"), _tools),
    (re.compile(r"plan|task|breakdown|step|milestone|approach"), _plan),
    (re.compile(r"analy|challenge|context|background|problem|justif|summary|status"), _analysis),
)


def writer_for(heading: str) -> Writer:
    """Which kind of content a requested heading asks for (analysis when nothing matches)."""
    lower = heading.lower()
    for pattern, writer in KINDS:
        if pattern.search(lower):
            return writer
    return _analysis


def requested_sections(
    bundle: ContextBundle, headings: tuple[str, ...], max_actions: int
) -> tuple[Section, ...]:
    """Exactly the requested headings, in order; the offline note leads the first one."""
    actions = plan_actions(bundle, max_actions)
    writers = [(h.lstrip("#").strip(), writer_for(h.lstrip("#").strip())) for h in headings]
    out = [Section(title, writer(bundle, actions)) for title, writer in writers]
    if out and bundle.practices and all(w is not _practices for _, w in writers):
        # No heading asks for practices: they still belong with the analysis.
        kinds = [w for _, w in writers]
        i = kinds.index(_analysis) if _analysis in kinds else 0
        extra = "**Practices that apply:**\n\n" + best_practices(bundle)
        out[i] = Section(out[i].title, out[i].body + "\n\n" + extra)
    if out and OFFLINE_NOTE not in out[0].body:
        out[0] = Section(out[0].title, OFFLINE_NOTE + "\n\n" + out[0].body)
    return tuple(out)
