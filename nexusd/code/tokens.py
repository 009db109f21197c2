"""Words of code and of reports about code: identifiers kept whole and split into their parts.

`parse_expr` gives `parse_expr`, `parse`, `expr`; `camelCase` gives `camelcase`, `camel`,
`case`; `sympy.Expr.subs` gives each part; a number with a letter (`3d` of `Axes3D` or of
"a 3d plot") is a word. Both sides of a search (the index and the request) go through
the same function, so a report that says "the latex printer" meets `LatexPrinter` and a
report that names `_print_Pow` meets it exactly.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache

# Chinese, Japanese and Korean prose puts no space around the names it mentions
# (`请修复parse_config函数`): its characters, and the full-width forms typed beside them,
# separate words, as they did before identifiers could be in other scripts.
_CJK = re.compile(
    "[\u1100-\u11ff\u3000-\u303f\u3040-\u30ff\u3100-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]"
)


class _Identifiers:
    """A letter or `_`, then letters, digits and `_`, in an alphabet (`café_name`,
    `ПарсерДанных`), as Python, Java, Go, Rust and JavaScript allow in names. ASCII text
    (most source files) takes the ASCII pattern: the Unicode one costs 1.7x as much."""

    _ascii = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    _any = re.compile(r"[^\W\d]\w*")

    def findall(self, text: str) -> list[str]:
        """Every identifier of `text`, in order."""
        if text.isascii():
            return self._ascii.findall(text)
        return self._any.findall(_CJK.sub(" ", text))

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Every identifier of `text` as a match, in order (at the same offsets)."""
        if text.isascii():
            return self._ascii.finditer(text)
        return self._any.finditer(_CJK.sub(" ", text))


IDENT = _Identifiers()


def marked(text: str, m: re.Match[str]) -> str | None:
    """An identifier match with the `?` or `!` Ruby's names end in (`valid?`, `save!`), as
    written; None when no such mark follows it (`x != y` and `x !~ y` are operators)."""
    end = m.end()
    if text[end : end + 1] in ("?", "!") and text[end + 1 : end + 2] not in ("=", "~"):
        return m.group(0) + text[end]
    return None


# A number with one letter after it is one part (`axes3d`, `Line2D`, `Axes3DSubplot` → `3d`,
# `2d`) where the letter ends a word: not where a word goes on (`qt5agg` → `5`, `agg`;
# `PBKDF2SHA1` → `2`, `sha`).
_NUMBER_LETTER = r"[0-9]+[A-Za-z](?![a-z0-9]|[A-Z][A-Z0-9])"
_PARTS = re.compile(rf"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|{_NUMBER_LETTER}|[0-9]+")
# Where such a number may end, written on its own (`a 3d projection`, `projection="3d"`):
# identifiers start at a letter, so only `d` would be left of it.
_NUMBERED_END = re.compile(r"[0-9][A-Za-z](?![A-Za-z0-9])")
# The same parts over a non-ASCII word's letter classes: U upper, L lower or caseless,
# D digit, anything else splits.
_CLASS_PARTS = re.compile(r"U+(?!L)|U?L+|D+")

# Words every program or report uses: they say nothing about which code is meant.
STOP = frozenset(
    """
    the a an of to in is it and or for on with be this that as are was at by not from but if we
    i you can when should have has which use using will would there their then so no yes do does
    get set self none true false return def class import also any all been being both could did
    each than them they these those its into our out just only some such what where who how why
    here after before other more most very may might must shall like one two see via per etc
    cls args kwargs elif else while try except finally raise pass lambda yield assert del global
    nonlocal async await with print var let const function new this null undefined void int str
    bool float dict list tuple object type value values result results data name names item items
    key keys len range isinstance doesn don isn aren wasn didn can't won't expected actual
    following example code issue error bug problem version python work works working way thing
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def split_identifier(word: str) -> list[str]:
    """The lower-case parts of one identifier (`_print_Pow` → `print`, `pow`)."""
    parts: list[str] = []
    for piece in word.split("_"):
        if not piece:
            continue
        if piece.isascii():
            parts.extend(p.lower() for p in _PARTS.findall(piece))
        else:
            classes = "".join(map(_letter_class, piece))
            parts.extend(piece[m.start() : m.end()].lower() for m in _CLASS_PARTS.finditer(classes))
    return parts


def _letter_class(char: str) -> str:
    if char.isdigit():
        return "D"
    if char.isupper():
        return "U"
    return "L" if char.isalpha() else "-"


def word_tokens(word: str) -> Iterator[str]:
    """One identifier as tokens: itself (lower-cased) and, when compound, each of its parts."""
    low = word.lower()
    if len(low) > 1 and low not in STOP:
        yield low
    parts = split_identifier(word)
    # `_pytest` and `__dict__` are also found by `pytest` and `dict`.
    if len(parts) > 1 or (parts and parts[0] != low):
        for part in parts:
            if len(part) > 1 and part not in STOP and part != low:
                yield part


@lru_cache(maxsize=262_144)
def _expand(word: str) -> tuple[str, ...]:
    return tuple(word_tokens(word))


def tokens(text: str) -> list[str]:
    """Every token of `text`, repeats kept (term frequency matters for BM25)."""
    out: list[str] = []
    for word in IDENT.findall(text):
        out.extend(_expand(word))
    out.extend(numbered(text))
    return out


def token_counts(text: str) -> Counter[str]:
    """How often each token occurs in `text` (each distinct identifier is split once)."""
    counts: Counter[str] = Counter()
    for word, n in Counter(IDENT.findall(text)).items():
        for token in _expand(word):
            counts[token] += n
    counts.update(numbered(text))
    return counts


def numbered(text: str) -> list[str]:
    """The numbers with a letter after them that stand as words (`3d`, `2D`, `3d_utils`),
    lower-cased; not the tail of a name or of a version (`x3d`, `v1.3d`)."""
    out = []
    # A digit-letter pair is rare in text, and cheap to find: the boundaries are checked by
    # hand, five times faster than a look-behind tried at every position.
    for m in _NUMBERED_END.finditer(text):
        start = m.start()
        while start and "0" <= text[start - 1] <= "9":
            start -= 1
        before = text[start - 1] if start else " "
        after = text[m.end()] if m.end() < len(text) else " "
        # `_` before it makes it an identifier's part (counted there), after it not (`3d_utils`
        # reads as `d_utils`); CJK characters separate words, as they do for identifiers.
        if before == "." or _joins(before, "_") or _joins(after):
            continue
        out.append(text[start : m.end()].lower())
    return out


def _joins(char: str, extra: str = "") -> bool:
    """Whether `char` continues a word beside a number: one of `extra`, or a letter or digit
    of any script but CJK (which separates words, as it does for identifiers)."""
    return char in extra or (char.isalnum() and not _CJK.match(char))


def pack_counts(counts: Mapping[str, int]) -> str:
    """Token counts as compact text (`word word:3`), to store instead of the text they came from."""
    return " ".join(word if n == 1 else f"{word}:{n}" for word, n in counts.items())


def path_tokens(path: str) -> list[str]:
    """The words of a path: folders, the file's stem and their parts (`sympy/core/expr.py`)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    out: list[str] = []
    for piece in re.split(r"[/\\.\-]+", stem):
        if piece:
            out.extend(word_tokens(piece))
    return out


def distinct(items: Iterable[str]) -> list[str]:
    """`items` without repeats, in order of first appearance."""
    return list(dict.fromkeys(items))
