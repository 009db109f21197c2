"""Form 3: free-form markdown, where the text is the goal.

Deterministic rules, in order (PROTOCOL.md "Free-form markdown"):
1. `======`-delimited blocks of list items are "related files": `- path: note`
   lines become artifacts (and artifact notes); the block, its delimiters and
   the label line just before it (`Related files:`) leave the text.
2. List items that name a heading (`` 1. `## Key Challenges and Analysis` ``)
   are requested sections, in order; the paragraph holding them leaves the text.
3. A paragraph that opens with a goal label (`Interpretation of User Query to
   planner:`, `Goal:`, `Task:`, `User query:` …) holds the goal: its text, and
   the paragraphs after it up to the next labelled paragraph or heading.
4. Otherwise the goal is the remaining text without role preambles
   ("You are a helpful assistant …"); if that leaves nothing, all remaining text.
"""

from __future__ import annotations

import re

from nexusd.protocol.fields import Draft, clean_value

_DELIMITER = re.compile(r"^\s*={3,}\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?P<item>.+)$")
_NOTE = re.compile(r"^`?(?P<path>[^`\s]+?)`?\s*(?::|\s[-—–])\s+(?P<note>.+)$")
# A heading named in a list item (`1. `## Plan``, `- ## Plan`) or alone in backticks.
_SECTION_ITEM = re.compile(
    r"^\s*(?:(?:[-*+]|\d+[.)])\s+(?:\*\*)?`?|(?:\*\*)?`)#{1,6}\s+(?P<title>[^`*]+?)\s*:?`?"
    r"(?:\*\*)?\s*:?\s*$"
)
_GOAL_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:interpretation of (?:the )?user(?:'s)? query(?: to (?:the )?planner)?"
    r"|user (?:query|request)|query|next goal|goal|task|objective)\s*"
    r"(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_LABEL_LINE = re.compile(r"^\s*(?:\*\*|__)?[^\s#].{0,60}?[:：]\s*(?:\*\*|__)?\s*(?:\*\*|__)?\s*$")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_ROLE = re.compile(r"^\s*you are (?:a|an|the)\b.*\b(?:assistant|planner|agent)\b", re.IGNORECASE)


def parse_freeform(text: str) -> Draft:
    """Fill a Draft from free-form markdown: goal, related files, requested sections."""
    draft = Draft(form="freeform")
    lines = _take_related_files(text.split("\n"), draft)
    paragraphs = _paragraphs(lines)
    kept = []
    for paragraph in paragraphs:
        titles = [m.group("title") for m in map(_SECTION_ITEM.match, paragraph) if m]
        if titles:
            draft.requested_sections.extend(t.strip() for t in titles)
            continue
        kept.append(paragraph)
    draft.values["goal"] = clean_value(_goal(kept))
    return draft


def _take_related_files(lines: list[str], draft: Draft) -> list[str]:
    """Remove `======` blocks of list items, recording their paths and notes."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        close = _closing(lines, index) if _DELIMITER.match(line) else None
        if close is None:
            out.append(line)
            index += 1
            continue
        for item_line in lines[index + 1 : close]:
            _record(item_line, draft)
        while out and not out[-1].strip():
            out.pop()
        if out and _LABEL_LINE.match(out[-1]):
            out.pop()
        index = close + 1
    return out


def _closing(lines: list[str], start: int) -> int | None:
    """Index of the delimiter closing the block at `start`, if every line inside is a list item."""
    for index in range(start + 1, len(lines)):
        if _DELIMITER.match(lines[index]):
            inside = [x for x in lines[start + 1 : index] if x.strip()]
            return index if inside and all(_ITEM.match(x) for x in inside) else None
    return None


def _record(line: str, draft: Draft) -> None:
    match = _ITEM.match(line)
    if not match:
        return
    item = match.group("item").strip()
    note = _NOTE.match(item)
    if note:
        path = note.group("path")
        draft.artifact_notes.append((path, note.group("note").strip()))
    else:
        path = item.strip("`").strip()
    if path not in draft.artifacts:
        draft.artifacts = (*draft.artifacts, path)


def _paragraphs(lines: list[str]) -> list[list[str]]:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


def _goal(paragraphs: list[list[str]]) -> str:
    for start, paragraph in enumerate(paragraphs):
        match = _GOAL_LABEL.match(paragraph[0])
        if not match:
            continue
        first = [match.group("rest")] if match.group("rest").strip() else []
        found = ["\n".join(first + paragraph[1:])]
        for following in paragraphs[start + 1 :]:
            if _LABEL_LINE.match(following[0]) or _HEADING.match(following[0]):
                break
            found.append("\n".join(following))
        return "\n\n".join(p for p in found if p.strip())
    body = [p for p in paragraphs if not _ROLE.match(p[0])] or paragraphs
    return "\n\n".join("\n".join(p) for p in body)
