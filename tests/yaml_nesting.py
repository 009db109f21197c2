"""Builders shared by the tests of deeply nested YAML: one field, nested in each way YAML can."""

from __future__ import annotations

import pytest

from nexusd.yamlload import MAX_DEPTH

# Flow lists `[[…]]`, flow mappings `{a: {a: …}}`, lists and mappings alternating, block
# mappings one key a line, block lists one `-` a line, and compact block lists `- - - x`.
SHAPES = ("flow_list", "flow_map", "mixed", "block_map", "block_list", "compact_list")
# Text linear in the levels: every level on the field's line, or (`- - x`) on the next.
_LINEAR = ("flow_list", "flow_map", "mixed", "compact_list")
# Levels nested under the field; with the mapping holding it, one more. 5000 only on one
# line: a block nesting indents each level one more, and would be over 1 MiB (12 MB).
DEPTHS = (MAX_DEPTH, 150, 200, 500, 1000, 5000)


def deep_field(shape: str, levels: int, key: str = "deep") -> str:
    """`key:` with `levels` lists or mappings nested inside one another under it, as YAML."""
    if shape == "flow_list":
        return f"{key}: {'[' * levels}{']' * levels}\n"
    if shape == "flow_map":
        return f"{key}: {'{a: ' * levels}x{'}' * levels}\n"
    if shape == "mixed":
        opens = ["[" if i % 2 == 0 else "{a: " for i in range(levels)]
        closes = ["]" if i % 2 == 0 else "}" for i in reversed(range(levels))]
        return f"{key}: {''.join(opens)}x{''.join(closes)}\n"
    if shape == "block_map":
        keys = "".join(f"{' ' * (i + 1)}k{i}:\n" for i in range(levels - 1))
        return f"{key}:\n{keys}{' ' * levels}k{levels - 1}: x\n"
    if shape == "block_list":
        dashes = "".join(f"{' ' * (i + 1)}-\n" for i in range(levels))
        return f"{key}:\n{dashes}{' ' * (levels + 1)}x\n"
    assert shape == "compact_list"
    return f"{key}:\n{'- ' * levels}x\n"


def deep_value(shape: str, levels: int) -> object:
    """The value `deep_field(shape, levels)` gives its key, built without recursion."""
    value: object = [] if shape == "flow_list" else "x"
    for i in reversed(range(levels - 1 if shape == "flow_list" else levels)):
        if shape == "block_map":
            value = {f"k{i}": value}
        elif shape == "flow_map" or (shape == "mixed" and i % 2):
            value = {"a": value}
        else:
            value = [value]
    return value


def too_deep_offset(shape: str) -> int:
    """Lines after the field's own where its level MAX_DEPTH + 1 of the document opens."""
    if shape == "compact_list":
        return 1
    return 0 if shape in _LINEAR else MAX_DEPTH


def too_deep_cases() -> list[object]:
    """(shape, levels) pairs nested too deep, each within a request's 1 MiB."""
    return [
        pytest.param(shape, levels, id=f"{shape}-{levels}")
        for shape in SHAPES
        for levels in DEPTHS
        if levels <= 1000 or shape in _LINEAR
    ]
