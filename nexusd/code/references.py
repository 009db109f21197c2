"""Where a file's code (not its strings or comments) names something, line by line.

The index reads a unit's names from all of its text, docstrings and comments included,
which is right for search and wrong for the impact graph: a docstring saying "run" is no
call of `run`. Given the files' sources, this tells which unit's own lines (its nested
defs aside) name a word in code, and which import statement names it. Strings are blanked
but the code inside them stays: `f"{total(x)}"` and `` `${total(x)}` `` call `total`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from nexusd.code.corpus import Corpus

Source = Callable[[str], "str | None"]  # a path's text, or None when it cannot be read

_PY_NOISE = re.compile(
    r'(?P<prefix>[rRbBuUfF]{0,2})(?:"""[\s\S]*?"""|' + r"'''[\s\S]*?'''"
    r'|"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*')|#[^\n]*"
)
# A `//` after `\`, `:` or `/` is a regex literal's or a URL's, not a comment.
_JS_NOISE = re.compile(
    r'/\*[\s\S]*?\*/|(?<![\\:/])//[^\n]*|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`"
)
# C, C++, Java, Go, Rust: a quote is a character (`'a'`, `'\n'`), so Rust's lifetimes
# (`&'a str`) and C++'s digit separators (`1'000`) are not strings.
_C_NOISE = re.compile(
    r'/\*[\s\S]*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|' + r"'(?:\\[^'\n]{1,8}|[^'\\\n])'|`[^`]*`"
)
_HOLE = re.compile(r"\$?\{([^{}\n]*)\}")
# Import statements, whatever their language: `from a import (\n  B,\n)`, `import {B} from`,
# `use a::{B, C};`, `export { B }`.
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+\S+[ \t]+import|import|use|export)\b"
    r"(?:[^\n(){}]|\([^)]*\)|\{[^}]*\})*",
    re.M,
)
_JS = frozenset({"javascript", "typescript", "tsx"})


def _blank(m: re.Match[str]) -> str:
    """A string or comment as spaces (newlines kept), but the code in an f-string's or a
    template literal's holes."""
    text = m.group(0)
    spaces = " " * len(text) if "\n" not in text else re.sub(r"[^\n]", " ", text)
    prefix = (m.groupdict().get("prefix") or "").lower()
    if "f" not in prefix and not text.startswith("`"):
        return spaces
    out = list(spaces)
    for hole in _HOLE.finditer(text):
        if hole.start() > 0 and text[hole.start() - 1] == "{":
            continue  # `{{` is an escaped brace
        out[hole.start(1) : hole.end(1)] = hole.group(1)
    return "".join(out)


def named(name: str) -> re.Pattern[str]:
    """`name` as a whole word (`$` counts as a word character)."""
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def _call(name: str) -> re.Pattern[str]:
    """`name` called: followed by `(`, and not defined there (`def name(`, `fn name(`)."""
    return re.compile(
        rf"(?<!\bdef )(?<!\bfn )(?<!\bfunc )(?<!\bfunction )(?<!\bclass )"
        rf"(?<![\w$]){re.escape(name)}\s*\("
    )


@dataclass(frozen=True)
class _Blanked:
    """One file's code, strings and comments blanked, and the entry owning each line."""

    text: str
    lines: list[str]
    owner: list[int]


class References:
    """The files' code with strings and comments blanked, read once per file."""

    def __init__(self, corpus: Corpus, source: Source | None) -> None:
        self.corpus = corpus
        self.source = source
        self._files: dict[int, _Blanked | None] = {}
        self._naming: dict[tuple[int, str], list[int]] = {}

    def _file(self, f: int) -> _Blanked | None:
        """File `f` blanked (None if its source cannot be read), made once."""
        if f in self._files:
            return self._files[f]
        raw = self.source(self.corpus.paths[f]) if self.source is not None else None
        if raw is None:
            self._files[f] = None
            return None
        language = self.corpus.files[f].language
        noise = _PY_NOISE if language == "python" else _JS_NOISE if language in _JS else _C_NOISE
        text = noise.sub(_blank, raw)
        lines = text.split("\n")
        # Each line belongs to the innermost unit holding it: a class's methods, a function's
        # nested defs speak for themselves. Outer units come first (by start, then longest).
        owner = [-1] * (len(lines) + 2)
        units = [(self.corpus.entries[e].unit, e) for e in self.corpus.file_entries[f]]
        for u, e in sorted(units, key=lambda item: (item[0].start, -item[0].end)):
            first = 1 if u.kind == "file" else u.start
            for n in range(first, min(u.end, len(lines)) + 1):
                owner[n] = e
        self._files[f] = _Blanked(text, lines, owner)
        return self._files[f]

    def says(self, f: int, e: int, name: str) -> bool:
        """Whether unit `e`'s own code names `name` (True when the source is unreadable)."""
        got = self._file(f)
        if got is None:
            return True
        key = (f, name)
        if key not in self._naming:
            found = named(name)
            self._naming[key] = [
                n
                for n, line in enumerate(got.lines, start=1)
                if name in line and found.search(line)
            ]
        return any(got.owner[n] == e for n in self._naming[key])

    def call_line(self, f: int, e: int, name: str) -> int | None:
        """The first line where unit `e`'s own code calls `name` (`name(`, `.name(`, not its
        `def`); None when it only names it (`json=json`, a parameter) or the source is
        unreadable (see `readable`)."""
        got = self._file(f)
        if got is None:
            return None
        call = _call(name)
        for n, line in enumerate(got.lines, start=1):
            if got.owner[n] == e and name in line and call.search(line):
                return n
        return None

    def readable(self, f: int) -> bool:
        """Whether file `f`'s source could be read (else every name counts as said)."""
        return self._file(f) is not None

    def import_line(self, f: int, name: str) -> int | None:
        """The line of an import statement of file `f` that names `name`, if any."""
        got = self._file(f)
        if got is None:
            return None
        found = named(name)
        for statement in _IMPORT.finditer(got.text):
            hit = found.search(statement.group(0))
            if hit is not None:
                return got.text.count("\n", 0, statement.start() + hit.start()) + 1
        return None
