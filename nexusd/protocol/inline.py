"""Inline code for responses: a path or a name shown as `code`, whatever characters it has.

A file may be called ``we`ird.py``: wrapped in single backticks it ends the code span in
the middle and leaves a stray backtick in the text. CommonMark's rule for code spans
decides how any text is written so it reads back unchanged.
"""

from __future__ import annotations

import re

_RUNS = re.compile(r"`+")


def inline_code(text: str) -> str:
    """`text` as a CommonMark code span: fenced by one more backtick than its longest run of
    backticks, padded with a space on each side when it starts or ends with a backtick (or
    starts and ends with a space, which a reader would strip). Line breaks become spaces, as
    a code span shows them."""
    flat = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    if not flat:
        return "` `"  # "``" is no code span: two backticks in the text
    fence = "`" * (max((len(run) for run in _RUNS.findall(flat)), default=0) + 1)
    edge = flat[:1] == "`" or flat[-1:] == "`"
    stripped = flat.startswith(" ") and flat.endswith(" ") and flat.strip(" ") != ""
    pad = " " if edge or stripped else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def inline_codes(items: tuple[str, ...] | list[str]) -> str:
    """Each item as inline code, comma-separated: `a`, `b`, `c`."""
    return ", ".join(inline_code(item) for item in items)
