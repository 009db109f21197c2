"""MCP tools that refuse arguments they do not take, and booleans where numbers go.

The SDK builds each tool's argument model from its signature and drops any other key
without a word, so `memory_search {"limit": 2}` (the parameter is `k`) quietly returned
the default count. The HTTP API answers 400 for an unknown field; a tool now fails the
same way, naming the argument and the ones it takes.

Pydantic reads `true` as 1 for an `int` (a bool is an int in Python), so
`open_file {"start_line": true}` opened line 1 and `request_plan {"timeout_seconds": true}`
waited one second. The schema says `integer` / `number`, which a boolean is not in JSON:
a tool now refuses one there, naming the argument and what it takes.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from mcp.server.mcpserver.tools import Tool
from pydantic import create_model, model_validator
from pydantic.fields import FieldInfo

_BOUND_WORDS = ((Ge, "ge", "≥"), (Gt, "gt", ">"), (Le, "le", "≤"), (Lt, "lt", "<"))


def number_wanted(field: FieldInfo) -> str | None:
    """What a numeric argument takes, in words (`a whole number ≥ 1`); None if not numeric."""
    kinds = typing.get_args(field.annotation) or (field.annotation,)
    if int in kinds:
        words = "a whole number"
    elif float in kinds:
        words = "a number"
    else:
        return None
    bounds = [
        f"{sign} {getattr(item, attr)}"
        for item in field.metadata
        for kind, attr, sign in _BOUND_WORDS
        if isinstance(item, kind)
    ]
    return f"{words} {' and '.join(bounds)}" if bounds else words


def refused_booleans(tool: str, data: Mapping[str, Any], numbers: Mapping[str, str]) -> str | None:
    """The error for the first boolean given for a numeric argument, else None."""
    for name, value in data.items():
        if isinstance(value, bool) and name in numbers:
            return (
                f"argument {name!r} of {tool} must be {numbers[name]}, got {str(value).lower()}"
                f" (a boolean): give {name} as a number, or leave it out for its default"
            )
    return None


def strict(tool: Tool) -> Tool:
    """`tool` refusing arguments it does not take (its schema says so too) and booleans
    for its numeric arguments."""
    base = tool.fn_metadata.arg_model
    names = sorted(field.alias or name for name, field in base.model_fields.items())
    numbers = {
        field.alias or name: wanted
        for name, field in base.model_fields.items()
        if (wanted := number_wanted(field)) is not None
    }

    def known(cls: type[Any], data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(
                f"unknown argument(s) {', '.join(map(repr, unknown))}: {tool.name} takes "
                + (", ".join(names) or "no arguments")
            )
        boolean = refused_booleans(tool.name, data, numbers)
        if boolean is not None:
            raise ValueError(boolean)
        return data

    check: Any = model_validator(mode="before")(classmethod(known))  # type: ignore[arg-type]
    tool.fn_metadata.arg_model = create_model(
        base.__name__, __base__=base, __validators__={"known_arguments": check}
    )
    tool.parameters = {**tool.parameters, "additionalProperties": False}
    return tool
