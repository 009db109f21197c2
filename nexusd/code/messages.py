"""Messages code raises or logs, and the request that quotes one.

A report that pastes `ValueError: Imaginary coordinates are not permitted.` or
`WARNING: no number is assigned for table` names, word for word, the line that printed it.
The index keeps the fixed pieces of the string literals passed to `raise`/`throw`, to
exception constructors and to warning, logging and panic calls (`"no number is assigned
for %s: %s"` keeps `no number is assigned for`); a request whose text contains one of them
points at the unit that holds it.

Read from a unit's text with a small scanner rather than a syntax tree, so every language
gets it (`raise ValueError(…)`, `throw new Error(…)`, `fmt.Errorf(…)`, `errors.New(…)`, `panic!(…)`,
`logger.warning(…)`) and parsing costs no second walk.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

# Where a message is given: a raise/throw, a constructor of an error, exception or warning
# class, or a call whose name says it reports something.
_TRIGGER = re.compile(
    r"\b(?:raise|throw|panic!?|errors\.New|\w*(?:Error|Exception|Warning|Errorf)"
    r"|warn|warning|warnings|error|errorf|exception|critical|fatal|fatalf|fail|abort)\b"
)
# Placeholders of printf, str.format, f-strings and template literals, and escapes: where
# a literal's fixed pieces end.
_HOLE = re.compile(
    r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]|\{[^{}]*\}|\$\{[^{}]*\}|\\[nrt\\'\"]"
)
# What may stand between a trigger and its call's parenthesis: nothing (`error(`), or the
# name of what is raised or thrown (`raise ValueError(`, `throw new Error(`,
# `throw std::runtime_error(`). Anything else (`if error: print(`) is another call.
_GAP = re.compile(r"[ \t]*(?:new[ \t]+)?(?:[\w.!]+(?:::[\w.!]+)*[ \t]*)?")
_QUOTES = "\"'`"
# Between two literals that make one string: whitespace, line breaks, a `+`.
_CONTINUED = re.compile(r"\s*(?:\+\s*)?[rRbBuUfF]{0,2}")
# A message's leading label: `error: `, `Warning: `, `fatal: `.
_LABEL = re.compile(r"[A-Za-z]+: ")
MIN_WORDS = 4  # shorter pieces ("has no attribute") are said by too many lines
MAX_SCAN = 600  # characters after a trigger searched for its call's arguments
MAX_LITERAL = 300


def _call_span(text: str, start: int) -> tuple[int, int, bool] | None:
    """The argument text of the call beginning at `start` (up to its closing parenthesis,
    else MAX_SCAN characters), and whether it closed."""
    limit = min(len(text), start + MAX_SCAN)
    open_at = text.find("(", start, limit)
    if open_at < 0 or open_at - start > 80 or not _GAP.fullmatch(text, start, open_at):
        return None
    depth = 0
    i = open_at
    quote = ""
    while i < limit:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in _QUOTES:
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return open_at + 1, i, True
        i += 1
    return open_at + 1, limit, False


def _literals(args: str) -> Iterable[str]:
    """The contents of the quoted strings in a call's argument text; literals only
    whitespace or a `+` apart are one (`"… to be " "combined"`, `"a " + "b"`)."""
    joined: list[str] = []
    i = 0
    while i < len(args):
        c = args[i]
        if c in _QUOTES:
            j = i + 1
            while j < len(args) and args[j] != c:
                j += 2 if args[j] == "\\" else 1
            joined.append(args[i + 1 : j])
            i = j + 1
            gap = _CONTINUED.match(args, i)
            k = gap.end() if gap else i
            if k < len(args) and args[k] in _QUOTES:
                i = k
                continue
            yield from _joined(joined)
            joined = []
        elif c == "#" or (c == "/" and args[i : i + 2] == "//"):
            # A comment inside the call: skip to its line's end.
            end = args.find("\n", i)
            i = len(args) if end < 0 else end
        else:
            i += 1
    yield from _joined(joined)


def _joined(parts: list[str]) -> list[str]:
    # The whole is what the program prints; each part is what a traceback's source lines
    # show (IPython quotes `"a 1-D array for each axis, followed by an origin.")`). Past
    # MAX_LITERAL the whole would be dropped: its parts are kept alone then.
    if len(parts) == 1:
        return parts
    whole = "".join(parts)
    return [whole, *parts] if len(whole) <= MAX_LITERAL else parts


def word_count(piece: str) -> int:
    """How many words of `piece` hold a letter or digit (punctuation alone is no word)."""
    return sum(1 for w in piece.split() if any(c.isalnum() for c in w))


def pieces(literal: str) -> list[str]:
    """A message literal's fixed pieces of at least MIN_WORDS words, whitespace collapsed;
    a piece that opens with a label (`error: type mismatch for field`) also without it."""
    if len(literal) > MAX_LITERAL:
        return []
    found = []
    for part in _HOLE.split(literal):
        if word_count(part) < MIN_WORDS:
            continue
        piece = " ".join(part.split())
        found.append(piece)
        # Reporters quote what follows the label (`报错 type mismatch for field uid`),
        # and tools print their own label in its place.
        label = _LABEL.match(piece)
        if label and word_count(piece[label.end() :]) >= MIN_WORDS:
            found.append(piece[label.end() :])
    return found


def messages(text: str) -> tuple[str, ...]:
    """The fixed pieces of the messages a unit's text raises, throws, warns or logs."""
    found: dict[str, None] = {}
    # Each trigger inside arguments already read (`raise ValueError(`, `error(error(`) was
    # read with them: reading it again made nested calls cost MAX_SCAN characters each (a
    # minute for a megabyte of `error(`). A call that never closes (a stray quote in a
    # docstring) is trusted no further than its first line, until such calls have cost about
    # the text's length: past that each is skipped whole, so the scan stays linear.
    read_to = 0
    unclosed_left = len(text) // MAX_SCAN + 16
    for m in _TRIGGER.finditer(text):
        if m.start() < read_to:
            continue
        span = _call_span(text, m.end())
        if span is None:
            continue
        start, end, closed = span
        if closed or unclosed_left <= 0:
            read_to = end
        else:
            unclosed_left -= 1
            line_end = text.find("\n", start)
            read_to = len(text) if line_end < 0 else line_end
        for literal in _literals(text[start:end]):
            for piece in pieces(literal):
                found.setdefault(piece, None)
    return tuple(found)


def _key(words: Sequence[str]) -> tuple[str, str]:
    # The second and third words are whole words in the report too: the first and last may
    # be glued to what filled a placeholder (`table:` for `%s:`).
    return words[1], words[2]


class MessageIndex:
    """Message pieces → the units that hold them, looked up through an interior word pair."""

    def __init__(self, units: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index (unit id, its message pieces) pairs."""
        holders: dict[str, list[int]] = defaultdict(list)
        for unit, found in units:
            for piece in found:
                holders[piece].append(unit)
        self._by_key: dict[tuple[str, str], list[tuple[str, list[int]]]] = defaultdict(list)
        for piece, ids in holders.items():
            words = piece.split()
            if len(words) >= MIN_WORDS and word_count(piece) >= MIN_WORDS:
                self._by_key[_key(words)].append((piece, ids))

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_key.values())

    def quoted(self, text: str) -> dict[str, list[int]]:
        """The pieces `text` contains word for word, each with the units that hold it."""
        words = text.split()
        flat = " ".join(words)
        found: dict[str, list[int]] = {}
        # In the text's order, not a set's: tied reasons must come out the same every run.
        for pair in dict.fromkeys(itertools.pairwise(words)):
            for piece, ids in self._by_key.get(pair, ()):
                if piece in flat:
                    found[piece] = ids
        return found
