"""The goal as a plan shows it: a clean title and a bounded summary, never a paste echoed whole.

Goals are often pasted markdown: a `# heading`, paragraphs, code blocks, a whole
traceback or log. The plan names the goal; the request file keeps the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexusd.code import boilerplate
from nexusd.protocol.comments import without_comments
from nexusd.protocol.inline import inline_code

# What the analysis shows of the goal; longer goals are summarised with a count of the rest.
SUMMARY_CHARS = 600
# What keyword, catalog and intent matching read of a text: a pasted log of a megabyte
# would cost seconds of regex work and add nothing the first pages do not say.
TOPIC_CHARS = 20_000
# A first line this short above a new sentence is the request's title (an issue pasted whole).
TITLE_CHARS = 120
# A prose line of so few words between code blocks joins them (`so`, `but`, `Output:`).
GLUE_WORDS = 2

_FENCE = re.compile(r"^\s{0,3}(```|~~~)[`~]*\s*(?P<lang>[\w+#.-]*)")
# Of a goal that is only code, how much of its first line a title shows.
CODE_LINE_CHARS = 60
# What an info string names, as a title says it (`py` is Python code).
_LANGUAGES = {"py": "Python", "python": "Python", "js": "JavaScript", "ts": "TypeScript"}
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_LABEL = re.compile(r"^(?:next\s+)?goal\s*[:：]\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# What a GitHub issue form writes in a field left empty.
_NO_RESPONSE = "_No response_"
# An issue template's section title on a line of its own: `**Describe the bug**`.
_BOLD_LINE = re.compile(r"\*\*([^*\n]{1,80})\*\*:?")


# Markup an issue form pastes around its parts: a collapsed block's label is no prose.
_HTML = re.compile(
    r"<summary\b[^>]*>.*?</summary>|</?(?:details|summary|br|p|tt|code|b|i|em|strong|sub|sup|"
    r"kbd|pre|div|span)\b[^>]*>",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class GoalText:
    """The prose of a goal, and what was left out of it."""

    prose: tuple[str, ...]  # paragraphs, headings stripped of their `#`
    code_blocks: int
    code_lines: int
    headings: frozenset[int] = frozenset()  # which paragraphs were headings
    leads: frozenset[int] = frozenset()  # which paragraphs a code block followed
    first_code: str = ""  # the first line of code that is not blank
    code_lang: str = ""  # the first code block's info string (`python`), if any


def split_goal(goal: str) -> GoalText:
    """Paragraphs of prose (one line each) and a count of the code blocks around them."""
    paragraphs: list[tuple[str, str]] = []  # (text, "heading" | "lead" | "")
    current: list[str] = []
    blocks = code_lines = 0
    in_fence = False
    first_code = code_lang = ""

    def close(kind: str = "") -> None:
        if current:
            paragraphs.append((" ".join(current), kind))
            current.clear()

    for raw in without_comments(goal[:TOPIC_CHARS]).splitlines():
        fence = _FENCE.match(raw)
        if fence:
            if not in_fence:
                blocks += 1
                code_lang = fence["lang"] if blocks == 1 else code_lang
            in_fence = not in_fence
            if in_fence and not current and paragraphs and not paragraphs[-1][1]:
                paragraphs[-1] = (paragraphs[-1][0], "lead")  # a blank line before the block
            close("lead")  # the prose before a block is not continued after it
            continue
        if in_fence:
            code_lines += 1
            first_code = first_code or raw.strip()
            continue
        line = raw.strip()
        if line == _NO_RESPONSE:
            continue
        bold = _BOLD_LINE.fullmatch(line)
        heading = bool(_HEADING.match(line)) or bold is not None
        if not line or heading:
            close()
            if bold is not None:
                paragraphs.append((bold.group(1).strip(), "heading"))
            elif heading:
                paragraphs.append((_HEADING.sub("", line).rstrip("#").strip(), "heading"))
            continue
        if not paragraphs and len(current) == 1 and _is_title(current[0], line):
            paragraphs.append((current.pop(), ""))
        current.append(_BULLET.sub("", line) if not current else line)
    close()
    kept = [(_LABEL.sub("", text).strip(), kind) for text, kind in paragraphs]
    kept = [(text, kind) for text, kind in kept if text]
    return GoalText(
        tuple(text for text, _ in kept),
        blocks,
        code_lines,
        frozenset(i for i, (_, kind) in enumerate(kept) if kind == "heading"),
        frozenset(i for i, (_, kind) in enumerate(kept) if kind == "lead"),
        first_code,
        code_lang,
    )


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


def _code_name(text: GoalText) -> str:
    """`Python code` or `code`, by the first block's info string."""
    lang = _LANGUAGES.get(text.code_lang.lower(), text.code_lang)
    return f"{lang} code" if lang else "code"


def _code_start(text: GoalText, limit: int = CODE_LINE_CHARS) -> str:
    """The first line of a goal's code as inline code, cut to `limit` characters."""
    return inline_code(clip(text.first_code, limit))


def goal_title(goal: str, limit: int = 100) -> str:
    """The goal's first line of prose, without markdown heading marks; for a goal of only
    code, what it gave and the code's first line."""
    text = split_goal(goal)
    if not text.prose and text.code_blocks:
        if not text.first_code:
            return "An empty code block without a description"
        said = f"{_code_name(text).capitalize()} without a description: "
        room = limit - len(said) - 6  # the code span's backticks and padding
        if room < 10:
            return clip(said.rstrip(": "), limit)
        return said + _code_start(text, min(room, CODE_LINE_CHARS))
    first = text.prose[0] if text.prose else " ".join(goal[: limit * 4].split())
    return clip(first, limit) or "(no goal)"


def goal_summary(goal: str, limit: int = SUMMARY_CHARS) -> str:
    """The goal's prose in one paragraph of at most `limit` characters, code blocks counted;
    an environment report, a collapsed block's markup and an empty section's heading left
    out, a heading leading into its section (`Steps to reproduce: …`)."""
    text = split_goal(boilerplate.strip(_HTML.sub("", goal)))
    kept = [
        i
        for i in range(len(text.prose))
        if i == 0 or i in text.headings or not _glue(text.prose[i], text)
    ]
    parts: list[str] = []
    for n, i in enumerate(kept):
        said = text.prose[i]
        last = n + 1 == len(kept)
        if i in text.headings and i != 0:
            if last or kept[n + 1] in text.headings:
                continue  # a section with nothing in it (its body was code, or dropped)
            parts.append(said.rstrip(":") + ":")
        elif i in text.leads and said.endswith((":", ",", ";")) and not last:
            parts.append(said[:-1] + ".")  # it led into code that is not repeated here
        else:
            parts.append(said if said.endswith((".", ":", "!", "?")) else said + ".")
    summary = clip(" ".join(parts), limit) or _only_code(text)
    left = len(goal) - len(summary)
    notes = []
    if text.code_blocks:
        notes.append(
            f"{text.code_blocks} code block(s), {text.code_lines} line(s), not repeated here"
        )
    if summary.endswith("…") or len(goal) > TOPIC_CHARS:
        notes.append(f"{max(left, 0):,} more characters in the request")
    return summary + (f" _({'; '.join(notes)})_" if notes else "")


def _only_code(text: GoalText) -> str:
    """What a goal without prose gave: a Goal line is never left empty by a pasted block."""
    if not text.code_blocks:
        return ""
    if not text.first_code:
        return "The request gives only an empty code block, no description of what to do."
    return (
        f"The request gives only {_code_name(text)}, no description of what to do with it; "
        f"it starts {_code_start(text)}."
    )


def _glue(paragraph: str, text: GoalText) -> bool:
    """A word or two that only led into a code block left out (`so`, `but`, `Output:`)."""
    return text.code_blocks > 0 and len(paragraph.split()) <= GLUE_WORDS


def topic(text: str) -> str:
    """The part of a text that matching reads (see TOPIC_CHARS)."""
    return text[:TOPIC_CHARS]
