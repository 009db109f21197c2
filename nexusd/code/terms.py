"""A unit's tokens with their counts: computed once, where the file is parsed, then stored.

Parse workers replace each unit's text by its packed token counts (`with_terms`), so the
index stores a third of the bytes and opening a stored index unpacks counts instead of
running the tokenizer over every file again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from nexusd.code.tokens import pack_counts, token_counts, unpack_counts
from nexusd.code.units import CodeUnit, ParsedFile


def unit_counts(unit: CodeUnit) -> Counter[str]:
    """The token counts of one unit: its own text, plus its name once more."""
    if unit.terms:
        return unpack_counts(unit.terms)
    counts = token_counts(unit.text)
    if unit.kind != "file":
        counts.update(token_counts(unit.name))
    return counts


def with_terms(parsed: ParsedFile) -> ParsedFile:
    """`parsed` with each unit's text replaced by its packed token counts (what is stored)."""
    units = tuple(replace(u, text="", terms=pack_counts(unit_counts(u))) for u in parsed.units)
    return replace(parsed, units=units)
