"""The architect's answer schema and its hand-written validator."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from nexusd.models.answers import parse_json_answer
from nexusd.planner.llm_schema import (
    FIELDS,
    architect_schema,
    field_errors,
    section_errors,
    sections_schema,
    validate_answer,
)

GOOD: dict[str, Any] = {
    "analysis": "The fixture leaks state.",
    "actions": [
        {
            "title": "Scope the fixture",
            "details": "per test",
            "target_files": ["tests/conftest.py"],
            "verify": "pytest -x",
        }
    ],
    "blocker_solutions": [{"blocker": "flaky CI", "solution": "pin the seed"}],
    "best_practices": ["Keep fixtures small."],
    "tool_calls": [{"tool": "pytest", "args": "-x", "purpose": "check"}],
    "risks": [],
    "checklist": ["Run tests three times."],
}


def test_a_good_answer_validates() -> None:
    assert validate_answer(GOOD, need_blockers=True) == []


def test_schema_lists_every_field_and_the_action_limit() -> None:
    schema = architect_schema(5)
    assert schema["required"] == list(FIELDS)
    assert schema["properties"]["actions"]["maxItems"] == 5
    assert sections_schema(["Summary"])["properties"]["sections"]["required"] == ["Summary"]


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda a: a.pop("analysis"), "analysis", "analysis: missing"),
        (lambda a: a.update(analysis="  "), "analysis", "non-empty string"),
        (lambda a: a.update(actions=[]), "actions", "non-empty list"),
        (
            lambda a: a.update(actions=[GOOD["actions"][0]] * 9),
            "actions",
            "at most 8 actions, got 9",
        ),
        (lambda a: a["actions"][0].pop("verify"), "actions", "actions[0].verify"),
        (
            lambda a: a["actions"][0].update(target_files="a.py"),
            "actions",
            "actions[0].target_files",
        ),
        (lambda a: a["actions"].append("do it"), "actions", "actions[1]: must be an object"),
        (lambda a: a.update(best_practices=[]), "best_practices", "must not be empty"),
        (lambda a: a.update(checklist="run"), "checklist", "list of non-empty strings"),
        (lambda a: a.update(tool_calls=[{"tool": "x"}]), "tool_calls", "tool_calls[0].purpose"),
        (lambda a: a.update(blocker_solutions=[]), "blocker_solutions", "solve each"),
    ],
)
def test_each_fault_is_named_on_its_field(mutate: Any, field: str, message: str) -> None:
    answer = copy.deepcopy(GOOD)
    mutate(answer)
    errors = field_errors(answer, need_blockers=True)
    assert list(errors) == [field]
    assert any(message in e for e in errors[field])


def test_no_blockers_means_an_empty_list_is_fine() -> None:
    answer = copy.deepcopy(GOOD) | {"blocker_solutions": []}
    assert validate_answer(answer, need_blockers=False) == []


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(GOOD),
        "Sure! Here is the plan:\n```json\n" + json.dumps(GOOD) + "\n```\nHope it helps.",
        "blah " + json.dumps(GOOD) + " trailing words",
    ],
)
def test_json_is_found_in_chatter_and_fences(text: str) -> None:
    answer, errors = parse_json_answer(text)
    assert errors == [] and answer == GOOD


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty answer"),
        ("no json here", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"analysis": "cut off', "not valid JSON"),
    ],
)
def test_garbage_is_reported(text: str, fragment: str) -> None:
    answer, errors = parse_json_answer(text)
    assert answer is None and fragment in errors[0]


def test_requested_sections() -> None:
    answer = {"sections": {"Summary": "ok", "Risks": " "}}
    assert section_errors(answer, ["Summary", "Risks", "Next"]) == {
        "Risks": ["sections['Risks']: missing or empty"],
        "Next": ["sections['Next']: missing or empty"],
    }
    assert set(section_errors({}, ["A"])) == {"A"}
