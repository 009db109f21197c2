"""Keywords of free text: the words the offline planner matches against files and the catalog."""

from __future__ import annotations

import re

# Words that say nothing about *what* a goal or blocker is about.
STOPWORDS = frozenset(
    """
    a about above add added adds after again against all also am an and any are as at be because
    been before being below between both but by can code could cycle did do does doing done down
    during each even every few file files find fix fixed fixes for found from further get gets
    goal got had has have having he her here hers him his how i if in into is it its itself just
    keep keeps less let like locally make makes me more most must my need needs next no none nor
    not now of off on once one only or other our out over own per plan previous run runs same
    she should so some still such sure test tests than that the their them then there these they
    this those through time times to too tries try under until up use used using very via want
    was we were what when where which while who whom why will with within without work working works
    would you your yours
    anti multi non pre self semi sub
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[-'][A-Za-z0-9_]+)*")


def keywords(text: str, *, min_len: int = 3, limit: int = 12) -> tuple[str, ...]:
    """Distinct lower-case content words of `text`, in order of first appearance."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        # `__repr__` is the word `repr` (the pattern starts at a letter: `repr__` was left).
        word = match.group(0).lower().strip("'_")
        if len(word) < min_len or word in STOPWORDS or word in seen:
            continue
        seen[word] = None
        for part in re.split(r"[_-]", word):
            # `overflow_shelf` also matches prose that says "overflow shelf".
            if part != word and len(part) >= min_len and part not in STOPWORDS:
                seen.setdefault(part, None)
        if len(seen) >= limit:
            break
    return tuple(list(seen)[:limit])
