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

from nexusd.code.corpus import Corpus

Source = Callable[[str], "list[str] | None"]  # a path's lines, or None when unreadable

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


class References:
    """The files' code with strings and comments blanked, read once per file."""

    def __init__(self, corpus: Corpus, source: Source | None) -> None:
        self.corpus = corpus
        self.source = source
        self._files: dict[int, tuple[str, list[int]] | None] = {}
        self._lines: dict[tuple[int, str], list[int]] = {}

    def _file(self, f: int) -> tuple[str, list[int]] | None:
        """(blanked text, the entry owning each line) of file `f`, or None if unreadable."""
        if f in self._files:
            return self._files[f]
        lines = self.source(self.corpus.paths[f]) if self.source is not None else None
        if lines is None:
            self._files[f] = None
            return None
        language = self.corpus.files[f].language
        noise = _PY_NOISE if language == "python" else _JS_NOISE if language in _JS else _C_NOISE
        text = noise.sub(_blank, "\n".join(lines))
        # Each line belongs to the innermost unit holding it: a class's methods, a function's
        # nested defs speak for themselves. Outer units come first (by start, then longest).
        entries = self.corpus.file_entries[f]
        owner = [-1] * (len(lines) + 2)
        units = sorted(entries, key=lambda e: (self.corpus.entries[e].unit.start, -self._end(e)))
        for e in units:
            u = self.corpus.entries[e].unit
            first = 1 if u.kind == "file" else u.start
            for n in range(first, min(u.end, len(lines)) + 1):
                owner[n] = e
        self._files[f] = (text, owner)
        return self._files[f]

    def _end(self, e: int) -> int:
        return self.corpus.entries[e].unit.end

    def lines_naming(self, f: int, name: str) -> list[int] | None:
        """The lines of file `f` whose code names `name` (None if unreadable)."""
        got = self._file(f)
        if got is None:
            return None
        key = (f, name)
        if key not in self._lines:
            found = named(name)
            self._lines[key] = [
                n
                for n, line in enumerate(got[0].split("\n"), start=1)
                if name in line and found.search(line)
            ]
        return self._lines[key]

    def says(self, f: int, e: int, name: str) -> bool:
        """Whether unit `e`'s own code names `name` (True when the source is unreadable)."""
        lines = self.lines_naming(f, name)
        got = self._files.get(f)
        if lines is None or got is None:
            return True
        owner = got[1]
        return any(owner[n] == e for n in lines)

    def import_line(self, f: int, name: str) -> int | None:
        """The line of an import statement of file `f` that names `name`, if any."""
        got = self._file(f)
        if got is None:
            return None
        text = got[0]
        found = named(name)
        for statement in _IMPORT.finditer(text):
            hit = found.search(statement.group(0))
            if hit is not None:
                return text.count("\n", 0, statement.start() + hit.start()) + 1
        return None
