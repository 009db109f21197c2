"""MEMORY.md as a role may see it: the `## Sections` of categories it may read. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable

_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def visible_sections(text: str, may_read: Callable[[str], bool]) -> str:
    """`text` without the level-2 sections whose category (the heading, lowercased)
    `may_read` refuses; the text above the first section is always kept. A note at the
    end names the sections left out."""
    kept: list[str] = []
    hidden: list[str] = []
    showing = True
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is not None:
            title = match.group(1).strip()
            showing = may_read(title.lower())
            if not showing:
                hidden.append(title)
        if showing:
            kept.append(line)
    out = "\n".join(kept)
    if hidden:
        out = out.rstrip("\n") + f"\n\n<!-- not shown to your role: {', '.join(hidden)} -->\n"
    return out
