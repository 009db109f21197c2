"""Values of the code index: a parsed file and its units (file, class, function, window).

Every extractor (Python's `ast`, tree-sitter, plain line windows) returns a `ParsedFile`;
the index stores its units keyed by the file's git blob id, so an unchanged blob is never
parsed twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

UnitKind = Literal["file", "class", "function", "method", "window"]

# Why a file has no symbols: each shows as one line in `nexusd code status`.
FileStatus = Literal["ok", "syntax-error", "fallback", "binary", "too-large", "unreadable"]

# What one unit keeps of its text: enough for a reason and a snippet, not the whole body.
MAX_DOC_CHARS = 400
MAX_SIGNATURE_CHARS = 200


@dataclass(frozen=True, slots=True)
class CodeUnit:
    """One unit of a file: the file itself, a class, a function or method, or a line window."""

    path: str  # repository-relative, POSIX separators
    kind: UnitKind
    name: str  # `parse_expr`; the file unit's name is the file name
    qualname: str  # `Parser.parse_expr`; the file unit's is the module path (`pkg.mod`)
    start: int  # first line, 1-based
    end: int  # last line, inclusive
    signature: str = ""  # `def parse_expr(self, s, local_dict=None)`; one line
    doc: str = ""  # the docstring or leading comment, cut to MAX_DOC_CHARS
    defines: tuple[str, ...] = ()  # names bound here (the unit itself and its direct members)
    uses: tuple[str, ...] = ()  # identifiers referenced in the body (distinct, in order)
    imports: tuple[str, ...] = ()  # modules imported here (`a.b.c`), relative ones resolved
    bases: tuple[str, ...] = ()  # base classes as written (`Basic`, `sympy.Expr`)
    messages: tuple[str, ...] = ()  # fixed pieces of what it raises or logs (code/messages.py)
    text: str = ""  # the words a lexical search reads: identifiers, strings, comments


@dataclass(frozen=True)
class ParsedFile:
    """The units of one file (the file unit first) and how the parse went."""

    path: str
    language: str  # `python`, `javascript`, …, or `text` for the line-window fallback
    units: tuple[CodeUnit, ...]
    status: FileStatus = "ok"
    note: str = ""  # e.g. the syntax error's line and message
    # Says in its first lines that a tool wrote it (`DO NOT EDIT`, an amalgamation of the
    # sources): ranked below the code a fix goes in (`selection.looks_generated`).
    generated: bool = False

    @property
    def file_unit(self) -> CodeUnit:
        """The unit that stands for the whole file."""
        return self.units[0]


def clip(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def text_lines(text: str) -> list[str]:
    """The lines of `text` as an editor numbers them: a final newline ends the last line, it
    does not start another (a 6-line file is lines 1-6, not 1-7)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def normalize_path(raw: str) -> str:
    """A path as a user types it (`./pkg/x.py`, `pkg\\x.py`) in the index's form (`pkg/x.py`)."""
    path = raw.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def module_name(path: str) -> str:
    """`src/pkg/mod.py` → `src.pkg.mod`; `pkg/__init__.py` → `pkg` (the dotted import path);
    `lib/index.js` → `lib`, `src/net/mod.rs` → `src.net` (a folder's own file elsewhere)."""
    name = path.rsplit("/", 1)[-1]
    stem = path.rsplit(".", 1)[0] if "." in name else path
    parts = [p for p in stem.split("/") if p]
    # Python's package file is `__init__.py` only: its `mod.py` and `index.py` are modules
    # of their own (sympy's `core/mod.py` had the name of `sympy.core`, and its imports
    # were resolved one package too high).
    own = {"__init__"} if name.endswith((".py", ".pyi")) else {"__init__", "index", "mod"}
    if parts and parts[-1] in own and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


class Spanned(Protocol):
    """Anything with a line range: a stored unit, a ranked one."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


S = TypeVar("S", bound=Spanned)


def at_line(units: Sequence[S], line: int) -> S:
    """Of several units (same-named methods of different classes), the innermost holding
    `line`, else the nearest starting above it, else the first: a report's line numbers are
    its own version's, near this checkout's but not always on them."""
    holding = [u for u in units if u.start <= line <= u.end]
    if holding:
        return min(holding, key=lambda u: u.end - u.start)
    above = [u for u in units if u.start <= line]
    return max(above, key=lambda u: u.start) if above else units[0]
