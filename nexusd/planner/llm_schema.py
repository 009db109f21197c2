"""The JSON the architect's model must answer, and a validator that names each fault.

The schema goes into the prompt (and to back ends that constrain decoding with
it). The validator is hand-written, needs no jsonschema package, and reports
errors per field, so a half-right answer keeps its good parts and only the
missing ones are filled from the offline planner.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

MAX_ACTIONS = 8

# Answer fields in the order they are asked for.
FIELDS: tuple[str, ...] = (
    "analysis",
    "actions",
    "blocker_solutions",
    "best_practices",
    "tool_calls",
    "risks",
    "checklist",
)

_STR = {"type": "string", "minLength": 1}
_STRS = {"type": "array", "items": _STR}


def architect_schema(max_actions: int = MAX_ACTIONS) -> dict[str, Any]:
    """JSON schema of the architect's answer for the six standard sections."""
    return {
        "type": "object",
        "required": list(FIELDS),
        "properties": {
            "analysis": _STR,
            "actions": {
                "type": "array",
                "minItems": 1,
                "maxItems": max_actions,
                "items": {
                    "type": "object",
                    "required": ["title", "target_files", "verify"],
                    "properties": {
                        "title": _STR,
                        "details": {"type": "string"},
                        "target_files": _STRS,
                        "verify": _STR,
                    },
                },
            },
            "blocker_solutions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["blocker", "solution"],
                    "properties": {"blocker": _STR, "solution": _STR},
                },
            },
            "best_practices": {**_STRS, "minItems": 1},
            "tool_calls": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["tool", "purpose"],
                    "properties": {"tool": _STR, "args": {"type": "string"}, "purpose": _STR},
                },
            },
            "risks": _STRS,
            "checklist": {**_STRS, "minItems": 1},
        },
    }


def sections_schema(titles: Sequence[str]) -> dict[str, Any]:
    """JSON schema of an answer that fills explicitly requested sections by title."""
    return {
        "type": "object",
        "required": ["sections"],
        "properties": {
            "sections": {
                "type": "object",
                "required": list(titles),
                "properties": dict.fromkeys(titles, _STR),
            }
        },
    }


def field_errors(
    answer: Mapping[str, Any], *, max_actions: int = MAX_ACTIONS, need_blockers: bool = False
) -> dict[str, list[str]]:
    """Errors per answer field; a field absent from the result is valid."""
    errors: dict[str, list[str]] = {}

    def add(name: str, message: str) -> None:
        errors.setdefault(name, []).append(message)

    for name in FIELDS:
        if name not in answer:
            add(name, f"{name}: missing")
    analysis = answer.get("analysis")
    if "analysis" in answer and not _text(analysis):
        add("analysis", "analysis: must be a non-empty string")
    if "actions" in answer:
        _check_actions(answer["actions"], max_actions, add)
    if "blocker_solutions" in answer:
        _check_objects(
            answer["blocker_solutions"], "blocker_solutions", ("blocker", "solution"), add
        )
        if need_blockers and not answer["blocker_solutions"]:
            add("blocker_solutions", "blocker_solutions: the request lists blockers; solve each")
    for name in ("best_practices", "risks", "checklist"):
        if name in answer:
            _check_strings(answer[name], name, add, non_empty=name != "risks")
    if "tool_calls" in answer:
        _check_objects(answer["tool_calls"], "tool_calls", ("tool", "purpose"), add)
    return errors


def validate_answer(
    answer: Mapping[str, Any], *, max_actions: int = MAX_ACTIONS, need_blockers: bool = False
) -> list[str]:
    """Every validation error of an architect answer, as readable strings ([] when valid)."""
    per_field = field_errors(answer, max_actions=max_actions, need_blockers=need_blockers)
    return [msg for name in FIELDS for msg in per_field.get(name, [])]


def section_errors(answer: Mapping[str, Any], titles: Sequence[str]) -> dict[str, list[str]]:
    """Errors per requested section title of a `{"sections": {...}}` answer."""
    sections = answer.get("sections")
    if not isinstance(sections, dict):
        return {title: [f"sections: missing object with key {title!r}"] for title in titles}
    return {
        title: [f"sections[{title!r}]: missing or empty"]
        for title in titles
        if not _text(sections.get(title))
    }


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_actions(value: Any, max_actions: int, add: Any) -> None:
    if not isinstance(value, list) or not value:
        add("actions", "actions: must be a non-empty list")
        return
    if len(value) > max_actions:
        add("actions", f"actions: at most {max_actions} actions, got {len(value)}")
    for i, item in enumerate(value):
        where = f"actions[{i}]"
        if not isinstance(item, dict):
            add("actions", f"{where}: must be an object")
            continue
        for key in ("title", "verify"):
            if not _text(item.get(key)):
                add("actions", f"{where}.{key}: must be a non-empty string")
        files = item.get("target_files")
        if not isinstance(files, list) or not all(_text(f) for f in files):
            add("actions", f"{where}.target_files: must be a list of file paths")
        if "details" in item and not isinstance(item["details"], str):
            add("actions", f"{where}.details: must be a string")


def _check_objects(value: Any, name: str, keys: tuple[str, ...], add: Any) -> None:
    if not isinstance(value, list):
        add(name, f"{name}: must be a list")
        return
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            add(name, f"{name}[{i}]: must be an object with {', '.join(keys)}")
            continue
        for key in keys:
            if not _text(item.get(key)):
                add(name, f"{name}[{i}].{key}: must be a non-empty string")


def _check_strings(value: Any, name: str, add: Any, *, non_empty: bool) -> None:
    if not isinstance(value, list) or not all(_text(v) for v in value):
        add(name, f"{name}: must be a list of non-empty strings")
    elif non_empty and not value:
        add(name, f"{name}: must not be empty")


def schema_text(schema: Mapping[str, Any]) -> str:
    """The schema as compact JSON for a prompt."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
