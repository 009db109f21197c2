"""The request's tools file (e.g. `.cursor/available_mcp_tools.md`): the executor's tools."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nexusd.context.artifacts import resolve_inside

MAX_TOOLS = 40
MAX_TOOLS_FILE_BYTES = 262_144
_NAME = re.compile(r"[A-Za-z][\w.:/-]*\w")
_LEAD = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#{2,6})\s+(.*)$")
_ROW = re.compile(r"^\s*\|([^|]+)\|([^|]*)\|")
# What separates a tool's name from its description.
_SEPARATOR = re.compile(r"\s*(?::|\s[—–-]\s|\()\s*")
_NOT_TOOLS = frozenset({"name", "tool", "tools", "description", "usage", "example", "examples"})


@dataclass(frozen=True)
class Tool:
    """One tool the executor can call, with the description the file gives it."""

    name: str
    description: str = ""


@dataclass(frozen=True)
class ToolsFacts:
    """What the tools file says, or why it could not be read."""

    path: str | None  # as the request wrote it; None when the request names no tools file
    exists: bool
    tools: tuple[Tool, ...] = ()
    note: str = ""


def _split_entry(line: str) -> tuple[str, str] | None:
    row = _ROW.match(line)
    if row:
        return row.group(1), row.group(2)
    lead = _LEAD.match(line)
    if not lead:
        return None
    parts = _SEPARATOR.split(lead.group(1), maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def parse_tools(text: str) -> tuple[Tool, ...]:
    """Tool names from bullets, `## headings` or the first column of a table, in file order."""
    found: dict[str, Tool] = {}
    for line in text.splitlines():
        entry = _split_entry(line)
        if entry is None:
            continue
        head = entry[0].replace("**", "").strip().strip("`").strip()
        # A bullet of prose ("Use these tools…") is not a tool name: names are one token.
        if not _NAME.fullmatch(head) or head.lower() in _NOT_TOOLS or head in found:
            continue
        desc = entry[1].strip().rstrip(")").strip("|` ").strip()
        found[head] = Tool(head, desc[:160])
        if len(found) >= MAX_TOOLS:
            break
    return tuple(found.values())


def read_tools_file(root: Path, tools_file: str | None) -> ToolsFacts:
    """Read the tools file named by the request, refusing paths outside the repository."""
    if not tools_file or tools_file.strip().lower() in ("none", "n/a", "-"):
        return ToolsFacts(path=None, exists=False)
    resolved, reason = resolve_inside(root, tools_file)
    if resolved is None:
        return ToolsFacts(tools_file, False, note=reason)
    if not resolved.is_file():
        return ToolsFacts(tools_file, False, note="does not exist")
    try:
        with resolved.open("rb") as fh:
            text = fh.read(MAX_TOOLS_FILE_BYTES).decode("utf-8", "replace")
    except OSError as exc:
        return ToolsFacts(tools_file, False, note=f"unreadable: {exc}")
    tools = parse_tools(text)
    note = "" if tools else "lists no tool names this planner recognises"
    return ToolsFacts(tools_file, True, tools, note)
