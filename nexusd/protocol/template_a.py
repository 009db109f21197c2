"""Form 2: the original Template A layout, `[🎯 NEXT GOAL (Cycle 3)] value` lines.

Labels are matched by emoji first (they stay the same in translated templates)
and by words second; values run on until the next label, heading or `---`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nexusd.protocol.fields import (
    ARTIFACT_SEPARATORS,
    BLOCKER_SEPARATORS,
    QUESTION_KEYS,
    Draft,
    clean_value,
    question_key,
    split_items,
    to_cycle,
    words,
)
from nexusd.protocol.inline import inline_code

# Emoji (without variation selectors) -> field; ❓ marks an executor question.
EMOJI_FIELDS: dict[str, str] = {
    "🔢": "cycle",
    "📂": "project",
    "📁": "project",
    "🗺": "previous_goal",
    "✅": "previous_outcome",
    "🚧": "blockers",
    "🎯": "goal",
    "📜": "history_path",
    "⏳": "time_box",
    "⌛": "time_box",
    "📎": "artifacts",
    "🗒": "scratchpad_delta",
    "🔍": "tools_file",
    "🔎": "tools_file",
    "🔖": "adr_link",
    "❓": "question",
    "❔": "question",
}

# Label words -> field, checked in order (English first, then the Chinese template's words).
WORD_FIELDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), key)
    for pattern, key in (
        (r"\b(previous|prev|last) goal\b|上一目标|上个目标|前一目标|先前目标", "previous_goal"),
        (r"\b(previous )?outcome\b|\bresult\b|结果|成果", "previous_outcome"),
        (r"\bgoal\b|目标", "goal"),
        (r"\bblockers?\b|阻碍|障碍|阻塞", "blockers"),
        (r"\bhistory\b|历史", "history_path"),
        (r"\btime ?box\b|时间盒|时限", "time_box"),
        (r"\bartifacts?\b|\brelevant files\b|工件|产物|相关文件", "artifacts"),
        (r"\bscratchpad\b|草稿|便签", "scratchpad_delta"),
        (r"\btools?\b|\bmcp\b|工具", "tools_file"),
        (r"\badr\b|decision record|决策", "adr_link"),
        (r"\bproject\b|项目", "project"),
        (r"\bcycle\b|周期", "cycle"),
    )
)

LABEL = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?[\[［【]\s*(?P<label>[^\]］】\n]*?\S)\s*[\]］】](?:\*\*)?"
    r"\s*[:：]?[ \t]*(?P<value>.*)$"
)
# A `#` heading, or a section title written without `#`: bold, or opening with 📈 📞 📝.
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s+(?P<text>.*)|\*\*(?P<bold>[^*\[\]]+)\*\*\s*"
    r"|(?:\*\*)?(?P<emoji>[📈📞📝]\ufe0f?\s.*))$"
)
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
_CONTEXT_CYCLE = re.compile(r"(?:cycle|周期)\s*(\d+)", re.IGNORECASE)
_SELECTORS = dict.fromkeys(map(ord, "\ufe0f\ufe0e\u200d"))


def strip_selectors(text: str) -> str:
    """Drop emoji variation selectors and joiners so `🗺️` and `🗺` compare equal."""
    return text.translate(_SELECTORS)


def label_key(label: str, *, in_questions: bool = False) -> tuple[str | None, bool]:
    """(field or `question`, matched by emoji?) for a bracketed label; (None, False) if unknown."""
    plain = strip_selectors(label).strip()
    if plain and plain[0] in EMOJI_FIELDS:
        return EMOJI_FIELDS[plain[0]], True
    if in_questions and question_key(plain):
        return "question", False
    text = words(plain)
    for pattern, key in WORD_FIELDS:
        if pattern.search(text):
            return key, False
    return None, False


def section_kind(heading: str) -> str | None:
    """`context`, `questions`, `response` for a Template A heading; None if it is none of them."""
    plain = strip_selectors(heading)
    lower = plain.lower()
    if "📝" in plain or "planner response" in lower or "规划器响应" in plain or "响应" in plain:
        return "response"
    if "📞" in plain or "question" in lower or "问题" in plain:
        return "questions"
    if "📈" in plain or "context" in lower or "上下文" in plain:
        return "context"
    return None


def looks_like_template_a(text: str) -> bool:
    """True when the text has a next-goal label, or two labels of any Template A field."""
    found = 0
    for line in text.split("\n"):
        match = LABEL.match(line)
        key = label_key(match.group("label"))[0] if match else None
        if key == "goal":
            return True
        found += key is not None
        if found >= 2:
            return True
    return False


@dataclass
class _Entry:
    label: str
    key: str | None
    line: int
    lines: list[str] = field(default_factory=list)

    def value(self) -> str | None:
        return clean_value("\n".join(self.lines))


def parse_template_a(text: str, *, first_line: int = 1) -> Draft:
    """Fill a Draft from the CYCLE CONTEXT labels and the executor's question labels.

    `first_line` is the file line number of the text's first line (for messages).
    """
    draft = Draft(form="template_a")
    entries: list[_Entry] = []
    questions: list[_Entry] = []
    section = "context"
    heading_cycle: int | None = None
    current: _Entry | None = None
    for number, line in enumerate(text.split("\n"), start=first_line):
        heading = _HEADING.match(line)
        title = _heading_title(heading)
        if heading and heading.group("bold") and section_kind(title) is None:
            heading = None  # a bold line inside a value, not a section title
        if heading or _RULE.match(line):
            current = None
            kind = section_kind(title) if heading else None
            section = kind or section
            if kind == "context":
                found = _CONTEXT_CYCLE.search(title)
                heading_cycle = int(found.group(1)) if found else heading_cycle
            continue
        if section == "response":
            continue  # the planner's part, empty in a request
        match = LABEL.match(line)
        key = (
            label_key(match.group("label"), in_questions=section == "questions")[0]
            if match
            else None
        )
        if match and key is not None:
            current = _Entry(match.group("label"), key, number, [match.group("value")])
            (questions if key == "question" else entries).append(current)
        elif match and line.lstrip()[:1] in "[［【*":
            current = _Entry(match.group("label"), None, number, [match.group("value")])
            entries.append(current)
        elif current is not None:
            current.lines.append(line.strip())
    _fill_fields(draft, entries)
    _fill_questions(draft, questions)
    if draft.cycle is None:
        draft.cycle = heading_cycle
    return draft


def _heading_title(heading: re.Match[str] | None) -> str:
    if heading is None:
        return ""
    return heading.group("text") or heading.group("bold") or heading.group("emoji") or ""


def _fill_fields(draft: Draft, entries: list[_Entry]) -> None:
    seen: set[str] = set()
    for entry in entries:
        if entry.key is None:
            draft.unknown(strip_selectors(entry.label).strip(), entry.line)
            continue
        if entry.key in seen:
            draft.warnings.append(
                f"{inline_code(entry.label)} (line {entry.line}) repeats a field; "
                "the later value is used"
            )
        seen.add(entry.key)
        draft.lines[entry.key] = entry.line
        value = entry.value()
        if entry.key == "cycle":
            draft.cycle = to_cycle(value, line=entry.line)
        elif entry.key == "blockers":
            draft.blockers = split_items(value, BLOCKER_SEPARATORS)
        elif entry.key == "artifacts":
            draft.artifacts = split_items(value, ARTIFACT_SEPARATORS)
        else:
            draft.values[entry.key] = value


def _fill_questions(draft: Draft, questions: list[_Entry]) -> None:
    # A ❓ label whose words are unknown (a translation we lack) takes its template position.
    for position, entry in enumerate(questions):
        attr = question_key(strip_selectors(entry.label).lstrip("❓❔ "))
        if attr is None and position < len(QUESTION_KEYS):
            attr = QUESTION_KEYS[position]
        if attr is None:
            draft.unknown(strip_selectors(entry.label).strip(), entry.line)
            continue
        draft.questions[attr] = entry.value()
