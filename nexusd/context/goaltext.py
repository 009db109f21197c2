"""The goal as a plan shows it: a clean title and a bounded summary, never a paste echoed whole.

Goals are often pasted markdown: a `# heading`, paragraphs, code blocks, a whole
traceback or log. The plan names the goal; the request file keeps the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What the analysis shows of the goal; longer goals are summarised with a count of the rest.
SUMMARY_CHARS = 600
# What keyword, catalog and intent matching read of a text: a pasted log of a megabyte
# would cost seconds of regex work and add nothing the first pages do not say.
TOPIC_CHARS = 20_000
# A first line this short above a new sentence is the request's title (an issue pasted whole).
TITLE_CHARS = 120
# A prose line of so few words between code blocks joins them (`so`, `but`, `Output:`).
GLUE_WORDS = 2

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_LABEL = re.compile(r"^(?:next\s+)?goal\s*[:：]\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class GoalText:
    """The prose of a goal, and what was left out of it."""

    prose: tuple[str, ...]  # paragraphs, headings stripped of their `#`
    code_blocks: int
    code_lines: int


def split_goal(goal: str) -> GoalText:
    """Paragraphs of prose (one line each) and a count of the code blocks around them."""
    paragraphs: list[str] = []
    current: list[str] = []
    blocks = code_lines = 0
    in_fence = False
    for raw in _COMMENT.sub("", goal[:TOPIC_CHARS]).splitlines():
        if _FENCE.match(raw):
            if not in_fence:
                blocks += 1
            in_fence = not in_fence
            if current:  # the prose before a block is not continued after it
                paragraphs.append(" ".join(current))
                current = []
            continue
        if in_fence:
            code_lines += 1
            continue
        line = raw.strip()
        heading = bool(_HEADING.match(line))
        if not line or heading:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            if heading:
                paragraphs.append(_HEADING.sub("", line).rstrip("#").strip())
            continue
        if not paragraphs and len(current) == 1 and _is_title(current[0], line):
            paragraphs.append(current.pop())
        current.append(_BULLET.sub("", line) if not current else line)
    if current:
        paragraphs.append(" ".join(current))
    prose = tuple(_LABEL.sub("", p).strip() for p in paragraphs if p.strip())
    return GoalText(tuple(p for p in prose if p), blocks, code_lines)


def _is_title(first: str, second: str) -> bool:
    """Whether a request's first line is a title its second line does not go on from: an
    issue's title pasted above its body (`Mod(x**2, x) is not (always) 0` / `When the base
    …`): short, not cut at a comma, and the next line starting a sentence of its own."""
    if len(first) > TITLE_CHARS or first.endswith((",", ";", ":", "-", "(", "—", "–")):
        return False
    if first.endswith((".", "!", "?")) or second.startswith((">>>", "`", "$ ", "In [")):
        return True  # a whole sentence, or code, above: not one sentence wrapped
    return second.lstrip("*_>[ ")[:1].isupper()  # `**Describe the bug**` starts one too


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word, with no code span left open."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0] if " " in flat[: limit - 1] else flat[: limit - 1]
    if cut.count("`") % 2:
        cut = cut[: cut.rfind("`")].rstrip()
    return cut + "…"


def goal_title(goal: str, limit: int = 100) -> str:
    """The goal's first line of prose, without markdown heading marks."""
    text = split_goal(goal)
    first = text.prose[0] if text.prose else " ".join(goal[: limit * 4].split())
    return clip(first, limit) or "(no goal)"


def goal_summary(goal: str, limit: int = SUMMARY_CHARS) -> str:
    """The goal's prose in one paragraph of at most `limit` characters, code blocks counted."""
    text = split_goal(goal)
    kept = [p for i, p in enumerate(text.prose) if i == 0 or not _glue(p, text)]
    prose = " ".join(p if p.endswith((".", ":", "!", "?")) else p + "." for p in kept)
    summary = clip(prose, limit)
    left = len(goal) - len(summary)
    notes = []
    if text.code_blocks:
        notes.append(
            f"{text.code_blocks} code block(s), {text.code_lines} line(s), not repeated here"
        )
    if summary.endswith("…") or len(goal) > TOPIC_CHARS:
        notes.append(f"{max(left, 0):,} more characters in the request")
    return summary + (f" _({'; '.join(notes)})_" if notes else "")


def _glue(paragraph: str, text: GoalText) -> bool:
    """A word or two that only led into a code block left out (`so`, `but`, `Output:`)."""
    return text.code_blocks > 0 and len(paragraph.split()) <= GLUE_WORDS


def topic(text: str) -> str:
    """The part of a text that matching reads (see TOPIC_CHARS)."""
    return text[:TOPIC_CHARS]
