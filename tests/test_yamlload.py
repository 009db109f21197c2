"""nexusd.yamlload: where a repeated key is placed, what cannot place it, and how deep YAML
may nest."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from nexusd import yamlload
from nexusd.errors import ProtocolError
from nexusd.protocol.parse import parse_request
from nexusd.yamlload import MAX_DEPTH, DuplicateKey, NestingTooDeep, load
from tests.yaml_nesting import SHAPES, deep_field, deep_value, too_deep_cases, too_deep_offset


def _with_stack_left(frames: int, call: Callable[[], Any]) -> Any:
    """`call()` run with about `frames` Python frames left: as from a caller deep in its own."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        return call()
    finally:
        sys.setrecursionlimit(limit)


def test_a_repeat_beside_nesting_too_deep_is_refused_for_the_depth() -> None:
    # libyaml composed 600 levels and found the repeat; PyYAML's Python composer, asked
    # again only to place it, is recursive and ran out of stack: a RecursionError, which
    # `nexusd plan` reported as "a bug in nexusd" and the daemon retried without end. Such
    # a document is now refused for its depth before either composer reads it.
    text = "goal: a\ngoal: b\ndeep: " + "[" * 600 + "]" * 600 + "\n"
    with pytest.raises(NestingTooDeep) as caught:
        load(text, strict=True)
    assert caught.value.line == 3
    with pytest.raises(ProtocolError) as error:
        parse_request(f"---\n{text}---\n", "r_plan_request.md")
    assert f"nest deeper than {MAX_DEPTH} levels, on line 4" in str(error.value)
    assert error.value.line == 4


def test_a_repeat_the_python_composer_cannot_place_is_still_a_duplicate_key() -> None:
    # Within MAX_DEPTH, but called with little stack left: libyaml finds the repeat, and
    # the Python composer that would place it runs out; what libyaml saw is kept.
    text = "goal: a\ngoal: b\ndeep: " + "[" * 60 + "]" * 60 + "\n"
    with pytest.raises(DuplicateKey) as caught:
        _with_stack_left(100, lambda: load(text, strict=True))
    assert (caught.value.key, caught.value.first, caught.value.second) == ("goal", 1, 2)
    assert caught.value.path is None


def test_a_repeat_at_the_deepest_level_allowed_is_placed() -> None:
    # The Python composer and the strict loader's recursion both reach MAX_DEPTH.
    text = "deep: " + "{a: " * (MAX_DEPTH - 2) + "{k: 1, k: 2}" + "}" * (MAX_DEPTH - 2) + "\n"
    with pytest.raises(DuplicateKey) as caught:
        load(text, strict=True)
    assert caught.value.path == ("deep", *["a"] * (MAX_DEPTH - 2))
    assert (caught.value.first, caught.value.second) == (1, 1)


@pytest.mark.parametrize("strict", [False, True], ids=["safe", "strict"])
@pytest.mark.parametrize(("shape", "levels"), too_deep_cases())
def test_nesting_deeper_than_max_depth_is_refused_where_it_starts(
    shape: str, levels: int, strict: bool
) -> None:
    # 200 levels of mappings were a RecursionError (strict), 1000 a libyaml error
    # about its own limit; lists ran as deep as libyaml allowed.
    text = "goal: x\n" + deep_field(shape, levels)
    with pytest.raises(NestingTooDeep) as caught:
        load(text, strict=strict)
    assert isinstance(caught.value, yaml.YAMLError)  # what every caller handles
    assert caught.value.problem == f"lists and mappings nest deeper than {MAX_DEPTH} levels"
    assert caught.value.line == 2 + too_deep_offset(shape)


@pytest.mark.parametrize("strict", [False, True], ids=["safe", "strict"])
@pytest.mark.parametrize("shape", SHAPES)
def test_nesting_up_to_max_depth_loads_as_before(shape: str, strict: bool) -> None:
    # The mapping holding `deep` is one level: MAX_DEPTH in all.
    text = "goal: x\n" + deep_field(shape, MAX_DEPTH - 1)
    assert load(text, strict=strict) == {"goal": "x", "deep": deep_value(shape, MAX_DEPTH - 1)}
    assert load(text, strict=strict) == yaml.safe_load(text)


@pytest.mark.parametrize("shape", SHAPES)
def test_depth_is_counted_without_libyaml_too(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # PyYAML's Python parser, as where PyYAML was built without libyaml.
    monkeypatch.setattr(yamlload, "_BASE", yaml.SafeLoader)
    with pytest.raises(NestingTooDeep) as caught:
        load("goal: x\n" + deep_field(shape, 1000))
    assert caught.value.line == 2 + too_deep_offset(shape)


def test_a_caller_with_little_stack_left_gets_nesting_too_deep() -> None:
    # Within MAX_DEPTH, yet the strict loader's recursion (~5 frames a level of mappings)
    # runs out of what the caller left: still an error every caller handles.
    text = "deep: " + "{a: " * 60 + "x" + "}" * 60 + "\n"
    with pytest.raises(NestingTooDeep) as caught:
        _with_stack_left(100, lambda: load(text, strict=True))
    assert caught.value.problem == "lists and mappings nest too deep to read"
    assert caught.value.line is None


def test_yaml_that_is_invalid_before_it_nests_too_deep_gets_its_own_error() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load("goal: x\n  bad indent: y\ndeep: " + "[" * 100 + "]" * 100 + "\n")
    assert not isinstance(caught.value, NestingTooDeep)
    assert "mapping values are not allowed" in str(caught.value)
