"""A validated architect answer rendered as the markdown bodies of the response sections."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nexusd.protocol.documents import STANDARD_SECTIONS
from nexusd.protocol.inline import inline_code

# Answer field -> the standard section it fills (risks join the analysis).
FIELD_SECTION: dict[str, str] = {
    "analysis": STANDARD_SECTIONS[0],
    "actions": STANDARD_SECTIONS[1],
    "blocker_solutions": STANDARD_SECTIONS[2],
    "best_practices": STANDARD_SECTIONS[3],
    "tool_calls": STANDARD_SECTIONS[4],
    "checklist": STANDARD_SECTIONS[5],
}

# How a missing field is named in the response's notes.
FIELD_LABEL: dict[str, str] = {
    "analysis": "analysis",
    "actions": "plan actions",
    "blocker_solutions": "blocker solutions",
    "best_practices": "best practices",
    "tool_calls": "tool calls",
    "risks": "risks",
    "checklist": "follow-up checklist",
}


def _unwrapped(text: str) -> str:
    """A model's name or command without the backticks it may have put around it: as many
    as it has on both ends, so a command's own (`kill `cat pid``, `echo `date``) stay."""
    text = text.strip()
    lead = len(text) - len(text.lstrip("`"))
    wrap = min(lead, len(text) - len(text.rstrip("`")))
    if not wrap or lead == len(text):
        return text
    return text[wrap:-wrap].strip()


def _files(files: Sequence[str]) -> str:
    return ", ".join(inline_code(_unwrapped(f)) for f in files) or "(none named)"


def render_actions(actions: Sequence[Mapping[str, Any]]) -> str:
    """A numbered plan: title, details, target files, how to verify."""
    lines = []
    for i, action in enumerate(actions, 1):
        head = f"{i}. **{action['title'].strip()}**"
        details = str(action.get("details") or "").strip()
        lines.append(f"{head} — {details}" if details else head)
        lines.append(f"   - Files: {_files(action['target_files'])}")
        lines.append(f"   - Verify: {action['verify'].strip()}")
    return "\n".join(lines)


def render_field(name: str, value: Any, *, risks: Sequence[str] = ()) -> str:
    """The markdown body for one valid answer field."""
    if name == "analysis":
        body = str(value).strip()
        if risks:
            body += "\n\n**Risks**\n\n" + "\n".join(f"- {r.strip()}" for r in risks)
        return body
    if name == "actions":
        return render_actions(value)
    if name == "blocker_solutions":
        if not value:
            return "No blockers were reported for this cycle."
        return "\n".join(f"- **{b['blocker'].strip()}**: {b['solution'].strip()}" for b in value)
    if name == "best_practices":
        return "\n".join(f"- {p.strip()}" for p in value)
    if name == "tool_calls":
        if not value:
            return "No tool calls are needed beyond the plan's verify steps."
        out = []
        for call in value:
            args = str(call.get("args") or "").strip()
            command = _unwrapped(f"{_unwrapped(call['tool'])} {args}")
            out.append(f"- {inline_code(command)} — {call['purpose'].strip()}")
        return "\n".join(out)
    if name == "checklist":
        return "\n".join(f"- [ ] {c.strip()}" for c in value)
    raise KeyError(name)


def answer_bodies(answer: Mapping[str, Any], bad: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Section title -> body for every field of `answer` that passed validation."""
    risks = answer.get("risks") if "risks" not in bad else ()
    bodies: dict[str, str] = {}
    for name, title in FIELD_SECTION.items():
        if name in bad or name not in answer:
            continue
        bodies[title] = render_field(name, answer[name], risks=risks or ())
    return bodies
