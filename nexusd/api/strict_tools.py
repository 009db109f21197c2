"""MCP tools that refuse arguments they do not take.

The SDK builds each tool's argument model from its signature and drops any other key
without a word, so `memory_search {"limit": 2}` (the parameter is `k`) quietly returned
the default count. The HTTP API answers 400 for an unknown field; a tool now fails the
same way, naming the argument and the ones it takes.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.tools import Tool
from pydantic import create_model, model_validator


def strict(tool: Tool) -> Tool:
    """`tool` refusing arguments it does not take (its schema says so too)."""
    base = tool.fn_metadata.arg_model
    names = sorted(field.alias or name for name, field in base.model_fields.items())

    def known(cls: type[Any], data: Any) -> Any:
        unknown = sorted(set(data) - set(names)) if isinstance(data, dict) else []
        if unknown:
            raise ValueError(
                f"unknown argument(s) {', '.join(map(repr, unknown))}: {tool.name} takes "
                + (", ".join(names) or "no arguments")
            )
        return data

    check: Any = model_validator(mode="before")(classmethod(known))  # type: ignore[arg-type]
    tool.fn_metadata.arg_model = create_model(
        base.__name__, __base__=base, __validators__={"known_arguments": check}
    )
    tool.parameters = {**tool.parameters, "additionalProperties": False}
    return tool
