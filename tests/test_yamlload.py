"""nexusd.yamlload: where a repeated key is placed, and what cannot place it."""

from __future__ import annotations

import pytest

from nexusd.errors import ProtocolError
from nexusd.protocol.parse import parse_request
from nexusd.yamlload import DuplicateKey, load


def test_a_repeat_beside_deep_nesting_is_still_a_duplicate_key() -> None:
    # libyaml composes 600 levels and finds the repeat; PyYAML's Python composer, asked
    # again only to place it, is recursive and ran out of stack: a RecursionError, which
    # `nexusd plan` reported as "a bug in nexusd" and the daemon retried without end.
    text = "goal: a\ngoal: b\ndeep: " + "[" * 600 + "]" * 600 + "\n"
    with pytest.raises(DuplicateKey) as caught:
        load(text, strict=True)
    assert (caught.value.key, caught.value.first, caught.value.second) == ("goal", 1, 2)
    with pytest.raises(ProtocolError) as error:
        parse_request(f"---\n{text}---\n", "r_plan_request.md")
    assert "`goal` is given twice" in str(error.value)
    assert error.value.line == 3
