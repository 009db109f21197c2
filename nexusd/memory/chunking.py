"""Markdown → chunks: heading paths, paragraph splits, stable ids, hashes. Pure, no I/O.

A chunk is one section (the text under a heading, up to the next heading of any
level). A section longer than `max_chars` is split on blank-line paragraph
boundaries; one paragraph longer than that is split on line boundaries. The id
is `path#heading path#ordinal`, where the ordinal counts chunks sharing that
heading path in the file, so an edit in one section never renames chunks of
another.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from nexusd.protocol.comments import without_comments
from nexusd.protocol.yamlio import load_yaml, split_front_matter
from nexusd.templates import template_text

HEADING_SEP = " > "
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_HASHTAG = re.compile(r"(?<![\w&#/`])#([A-Za-z][\w-]*)")
_DAILY_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})\.md$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
# Sentence ends (before a capital, digit, bracket or quote) and line breaks.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])|\n+")
# A chunk longer than this many words is embedded as the mean of windows this long that
# overlap by half (each headed by the heading path): the model reads 256 word pieces,
# about 170 words, and drops the rest. Measured on SciFact train (long abstracts): 120/60
# gave nDCG@10 0.745 against 0.740 for the first 256 pieces; unheaded 254-piece windows
# 0.735 (benchmarks/retrieval_eval.py).
WINDOW_WORDS = 120
WINDOW_STRIDE = 60


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a memory file."""

    id: str
    path: str
    heading: str
    ordinal: int
    body: str
    sha256: str
    line_start: int
    line_end: int
    category: str
    tags: tuple[str, ...]
    date: str

    @property
    def search_text(self) -> str:
        """What is keyword-indexed and hashed: the heading path, then the body."""
        return embed_text(self.heading, self.body)

    @property
    def windows(self) -> list[str]:
        """What is embedded: `search_text`, or for a long chunk its windows."""
        return embed_windows(self.heading, self.body)


@dataclass(frozen=True)
class FrontMatter:
    """Front matter fields that matter to memory, and where the body starts."""

    category: str | None
    tags: tuple[str, ...]
    date: str | None
    body_line: int
    warning: str | None = None


def embed_text(heading: str, body: str) -> str:
    """The text a chunk is embedded and hashed as."""
    return f"{heading}\n\n{body}" if heading else body


def embed_windows(
    heading: str, body: str, words: int = WINDOW_WORDS, stride: int = WINDOW_STRIDE
) -> list[str]:
    """`embed_text(heading, body)`, or for a body over `words` words, windows of whole
    sentences (or lines) of about `words` words, each `stride` words on, each headed."""
    if len(body.split()) <= words:
        return [embed_text(heading, body)]
    sents = [p for p in _SENTENCE_END.split(body) if p.strip()]
    out: list[str] = []
    i = 0
    while i < len(sents):
        j, n = i, 0
        while j < len(sents) and (n == 0 or n + len(sents[j].split()) <= words):
            n += len(sents[j].split())
            j += 1
        out.append(embed_text(heading, " ".join(s.strip() for s in sents[i:j])))
        if j >= len(sents):
            break
        step, m = i, 0  # about `stride` words on, at least one sentence
        while step < j - 1 and m < stride:
            m += len(sents[step].split())
            step += 1
        i = max(step, i + 1)
    return out


def _as_tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        items: Sequence[Any] = [v for v in re.split(r"[,\s]+", value) if v]
    elif isinstance(value, list | tuple):
        items = value
    else:
        return ()
    return tuple(str(v).strip().lstrip("#").lower() for v in items if str(v).strip())


def parse_front_matter(lines: Sequence[str]) -> FrontMatter:
    """Read a leading `---` YAML block; malformed front matter is reported, not fatal."""
    try:
        split = split_front_matter("\n".join(lines))  # the protocol's reader, one for both
    except ValueError:
        return FrontMatter(None, (), None, 0, "front matter has no closing `---`; read as text")
    if split is None:
        return FrontMatter(None, (), None, 0)
    end = split.body_first_line - 2  # the closing fence's index in `lines`
    try:
        data = load_yaml(split.yaml_text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "YAML error"
        return FrontMatter(None, (), None, end + 1, f"front matter is not valid YAML ({first})")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return FrontMatter(None, (), None, end + 1, "front matter is not a mapping; ignored")
    category = data.get("category")
    date = data.get("date")
    date_text = str(date) if date is not None and _DATE.match(str(date)) else None
    return FrontMatter(
        category=str(category).strip().lower() if category else None,
        tags=_as_tags(data.get("tags")),
        date=date_text[:10] if date_text else None,
        body_line=end + 1,
    )


def daily_date(path: str) -> str | None:
    """The date in a daily note's file name (`…/2026-01-31.md`), if any."""
    match = _DAILY_NAME.search(path)
    return match.group(1) if match else None


def hashtags(text: str) -> tuple[str, ...]:
    """Inline `#tags` in a chunk's text, lowercased, in order of first use."""
    seen: dict[str, None] = {}
    for tag in _HASHTAG.findall(text):
        seen.setdefault(tag.lower(), None)
    return tuple(seen)


@dataclass(frozen=True)
class _Section:
    headings: tuple[tuple[int, str], ...]
    first_line: int  # 0-based index of the first body line
    lines: tuple[str, ...]


def _sections(lines: Sequence[str], start: int) -> list[_Section]:
    out: list[_Section] = []
    stack: list[tuple[int, str]] = []
    body_start = start
    body: list[str] = []
    in_fence = False
    for i in range(start, len(lines)):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            body.append(line)
            continue
        out.append(_Section(tuple(stack), body_start, tuple(body)))
        level = len(match.group(1))
        stack = [h for h in stack if h[0] < level]
        stack.append((level, match.group(2).strip()))
        body_start, body = i + 1, []
    out.append(_Section(tuple(stack), body_start, tuple(body)))
    return out


def _pieces(section: _Section, max_chars: int) -> list[tuple[int, int]]:
    """Split a section into (start, end) line ranges, end exclusive, on paragraph bounds."""
    lines = section.lines
    paragraphs: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        paragraphs.extend(_split_long(lines, i, j, max_chars))
        i = j
    pieces: list[tuple[int, int]] = []
    for start, end in paragraphs:
        if pieces:
            cur_start, _ = pieces[-1]
            if _size(lines, cur_start, end) <= max_chars:
                pieces[-1] = (cur_start, end)
                continue
        pieces.append((start, end))
    return pieces


def _size(lines: Sequence[str], start: int, end: int) -> int:
    return sum(len(line) + 1 for line in lines[start:end])


def _split_long(
    lines: Sequence[str], start: int, end: int, max_chars: int
) -> list[tuple[int, int]]:
    if _size(lines, start, end) <= max_chars:
        return [(start, end)]
    out: list[tuple[int, int]] = []
    cur = start
    for k in range(start, end):
        if k > cur and _size(lines, cur, k + 1) > max_chars:
            out.append((cur, k))
            cur = k
    out.append((cur, end))
    return out


def _category(fm: FrontMatter, headings: tuple[tuple[int, str], ...], is_daily: bool) -> str:
    if fm.category:
        return fm.category
    if is_daily:
        return "daily"
    # The section a chunk sits in: its level-2 heading (`## Lessons`), else the nearest one.
    for level, title in headings:
        if level == 2:
            return title.lower()
    return headings[-1][1].lower() if headings else ""


def strip_comments(text: str) -> str:
    """Blank out HTML comments (template hints: for the person editing, not for search),
    keeping every line where it was."""
    return without_comments(text, keep_lines=True)


@functools.cache
def _scaffold() -> frozenset[str]:
    """The prose `nexusd init` writes into MEMORY.md and a daily note (what the file is for):
    the repository has learned none of it, so no search should find it."""
    found: set[str] = set()
    for name in ("memory", "daily_note"):
        text = strip_comments(template_text(name))
        found |= {" ".join(c.body.split()) for c in _chunked("", text, 1500, "")}
    return frozenset(found)


def chunk_markdown(path: str, text: str, *, max_chars: int, default_date: str) -> list[Chunk]:
    """Chunk one memory file; `path` is repository-relative, `default_date` is its mtime date.
    The prose the templates wrote is left out (what MEMORY.md is for is no lesson)."""
    scaffold = _scaffold()
    return [
        chunk
        for chunk in _chunked(path, text, max_chars, default_date)
        if " ".join(chunk.body.split()) not in scaffold
    ]


def normalize(text: str) -> str:
    """`text` with `\n` line ends and no byte order mark (which would hide a first heading
    or front matter); the lines stay where they were."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _chunked(path: str, text: str, max_chars: int, default_date: str) -> list[Chunk]:
    text = strip_comments(normalize(text))
    lines = text.split("\n")
    fm = parse_front_matter(lines)
    day = daily_date(path)
    date = day or fm.date or default_date
    ordinals: dict[str, int] = {}
    chunks: list[Chunk] = []
    for section in _sections(lines, fm.body_line):
        # An empty heading (`#` alone) still closes deeper sections but names no step.
        heading = HEADING_SEP.join(title for _, title in section.headings if title)
        category = _category(fm, section.headings, day is not None)
        for start, end in _pieces(section, max(max_chars, 1)):
            body = "\n".join(section.lines[start:end]).strip()
            if not body:
                continue
            ordinal = ordinals.get(heading, 0)
            ordinals[heading] = ordinal + 1
            tags = dict.fromkeys((*fm.tags, *hashtags(body)))
            chunks.append(
                Chunk(
                    id=f"{path}#{heading}#{ordinal}",
                    path=path,
                    heading=heading,
                    ordinal=ordinal,
                    body=body,
                    sha256=hashlib.sha256(embed_text(heading, body).encode("utf-8")).hexdigest(),
                    line_start=section.first_line + start + 1,
                    line_end=section.first_line + end,
                    category=category,
                    tags=tuple(tags),
                    date=date,
                )
            )
    return chunks


def line_categories(path: str, text: str) -> tuple[list[str], list[str]]:
    """`text`'s lines (newlines normalized) and the category `chunk_markdown` files each
    under: a heading's line takes the section it opens, front matter and the lines before
    the first heading the file's own (its front matter's, `daily`, else "")."""
    lines = normalize(text).split("\n")
    plain = strip_comments("\n".join(lines)).split("\n")
    fm = parse_front_matter(plain)
    day = daily_date(path) is not None
    out = [_category(fm, (), day)] * len(plain)
    for section in _sections(plain, fm.body_line):
        category = _category(fm, section.headings, day)
        first = section.first_line - (1 if section.headings else 0)
        out[first : section.first_line + len(section.lines)] = [category] * (
            section.first_line + len(section.lines) - first
        )
    return lines, out


def front_matter_warning(text: str) -> str | None:
    """The problem with a file's front matter, if it has one."""
    return parse_front_matter(normalize(text).split("\n")).warning
