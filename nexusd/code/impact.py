"""The impact graph around a file or a symbol: what it uses, and who uses it.

Edges come from the index: imports between files, references by name from units of files
that import the target (or anywhere, marked as a weaker name match), subclasses by their
base names, and the tests that import the file. The index reads a unit's names from all
of its text, docstrings and comments included (right for search); given the sources, a
reference edge is kept only where the name appears in code, outside strings and comments.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass

from nexusd.code.corpus import Corpus
from nexusd.code.units import CodeUnit

MAX_EDGES = 50
_BUILTINS = frozenset(dir(builtins))
# Strings and comments name things without using them (Python; C-like languages).
_PY_NOISE = re.compile(
    r'[rRbBuUfF]{0,2}(?:"""[\s\S]*?"""|' + r"'''[\s\S]*?''')"
    r'|"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'|#[^\n]*"
)
_C_NOISE = re.compile(
    r'/\*[\s\S]*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`"
)
Source = Callable[[str], "list[str] | None"]  # a path's lines, or None when unreadable


@dataclass(frozen=True)
class Edge:
    """One relation: `path:line` of the other side, its symbol, and what kind of edge."""

    path: str
    line: int
    symbol: str
    kind: str  # imports, imported-by, calls, subclass, test


@dataclass(frozen=True)
class Impact:
    """The neighbours of a file or a symbol in the code graph."""

    path: str
    symbol: str | None
    uses: tuple[Edge, ...]  # what the target depends on
    used_by: tuple[Edge, ...]  # what depends on the target
    note: str = ""


def impact(
    corpus: Corpus, path: str, symbol: str | None = None, source: Source | None = None
) -> Impact:
    """Who imports, calls or subclasses `path` (or `symbol` in it), and what it imports;
    with `source`, name references only where code (not prose) says the name."""
    f = corpus.file_for_path(path)
    if f is None:
        return Impact(path, symbol, (), (), note=f"`{path}` is not in the code index")
    real = corpus.paths[f]
    uses = [
        Edge(corpus.paths[t], 1, corpus.files[t].file_unit.qualname, "imports")
        for t in sorted(corpus.imports[f])
    ]
    importers = sorted(corpus.importers[f])
    used_by: list[Edge] = []
    if symbol is None:
        for i in importers:
            kind = "test" if corpus.tests[i] else "imported-by"
            used_by.append(Edge(corpus.paths[i], 1, corpus.files[i].file_unit.qualname, kind))
        return Impact(real, None, tuple(uses[:MAX_EDGES]), tuple(used_by[:MAX_EDGES]))
    name = symbol.split(".")[-1]
    code = _Code(corpus, source)
    defined = [e for e in corpus.file_entries[f] if corpus.entries[e].unit.name == name]
    if not defined:
        note = f"`{symbol}` is not defined in `{real}`; showing name references anywhere"
    else:
        note = ""
        uses = _callees(corpus, f, defined[0], code)
    near = set(importers) | {f}
    family = _family(corpus.files[f].language)
    for entry in corpus.entries:
        u = entry.unit
        if u.name == name and entry.file == f:
            continue
        kind = ""
        if name in u.bases or any(b.split(".")[-1] == name for b in u.bases):
            kind = "subclass"
        elif name in u.uses and code.says(entry.file, u, name):
            kind = "test" if corpus.tests[entry.file] else "calls"
        # A reference from a file that imports the target is certain; others in the same
        # language match by name only (`?`); other languages cannot call it by name.
        certain = entry.file in near
        if kind and (certain or _family(corpus.files[entry.file].language) == family):
            used_by.append(
                Edge(corpus.paths[entry.file], u.start, u.qualname, kind if certain else f"{kind}?")
            )
        if len(used_by) >= MAX_EDGES * 4:
            break
    # A file that imports the name itself (`from pkg.billing import Invoice`, a re-export).
    seen = {edge.path for edge in used_by}
    for i in importers:
        line = code.line_of(i, name) if corpus.paths[i] not in seen else None
        if line is not None:
            kind = "test" if corpus.tests[i] else "imported-by"
            used_by.append(Edge(corpus.paths[i], line, corpus.files[i].file_unit.qualname, kind))
    used_by.sort(key=lambda edge: (edge.kind.endswith("?"), edge.path, edge.line))
    return Impact(real, symbol, tuple(uses), tuple(used_by[:MAX_EDGES]), note)


def _family(language: str) -> str:
    """Languages that call each other's names directly count as one."""
    return {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}.get(language, language)


class _Code:
    """The code of files with strings and comments blanked, read once per file."""

    def __init__(self, corpus: Corpus, source: Source | None) -> None:
        self.corpus = corpus
        self.source = source
        self._files: dict[int, list[str] | None] = {}

    def _lines(self, f: int) -> list[str] | None:
        if self.source is None:
            return None
        if f not in self._files:
            lines = self.source(self.corpus.paths[f])
            if lines is not None:
                noise = _PY_NOISE if self.corpus.files[f].language == "python" else _C_NOISE
                # Blanked, not removed: line numbers stay those of the file.
                text = noise.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), "\n".join(lines))
                lines = text.split("\n")
            self._files[f] = lines
        return self._files[f]

    def says(self, f: int, unit: CodeUnit, name: str) -> bool:
        """Whether `unit`'s code names `name` (True when the source cannot be read)."""
        lines = self._lines(f)
        if lines is None:
            return True
        found = _named(name)
        inner = f"{unit.qualname}."
        # Its own lines: a class's methods (and a function's nested defs) speak for themselves.
        holes = [
            (o.unit.start, o.unit.end)
            for o in map(self.corpus.entries.__getitem__, self.corpus.file_entries[f])
            if o.unit.qualname.startswith(inner)
        ]
        return any(
            found(lines[n - 1])
            for n in range(unit.start, min(unit.end, len(lines)) + 1)
            if not any(a <= n <= b for a, b in holes)
        )

    def line_of(self, f: int, name: str) -> int | None:
        """The first line of file `f` whose code names `name`, if its source is readable."""
        found = _named(name)
        for number, line in enumerate(self._lines(f) or (), start=1):
            if found(line):
                return number
        return None


def _named(name: str) -> Callable[[str], object]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])").search


def _callees(corpus: Corpus, f: int, e: int, code: _Code) -> list[Edge]:
    """What unit `e` of file `f` calls, each name looked up in the same file, then in the
    files it imports (by name: `get` there counts whatever owns it, so `os.environ.get`
    can show up); elsewhere only a name one file defines (`calls?`). A function nested in
    another (a test's local helper) is never a callee from outside, nor a builtin's name."""
    unit = corpus.entries[e].unit
    reach = corpus.imports[f]
    edges: list[Edge] = []
    for other in unit.uses:
        if other == unit.name or not code.says(f, unit, other):  # its `def` line; its prose
            continue
        found = [d for d in corpus.defs.get(other, []) if not _local(corpus, d) and d != e]
        sure = [d for d in found if corpus.entries[d].file == f]
        sure = sure or [d for d in found if corpus.entries[d].file in reach]
        files = {corpus.entries[d].file for d in found}
        if other in _BUILTINS and not sure:
            continue  # `open(…)` is the builtin, not the one method the repository names so
        guess = (
            []
            if sure or len(files) != 1
            else [d for d in found if not corpus.tests[corpus.entries[d].file]]
        )
        for d in (sure or guess)[:3]:
            entry = corpus.entries[d]
            kind = "calls" if sure else "calls?"
            edges.append(
                Edge(corpus.paths[entry.file], entry.unit.start, entry.unit.qualname, kind)
            )
    return edges[:MAX_EDGES]


def _local(corpus: Corpus, e: int) -> bool:
    """Whether entry `e` is defined inside a function (not a class): local to that call."""
    entry = corpus.entries[e]
    parent = entry.unit.qualname.rpartition(".")[0]
    if not parent:
        return False
    return any(
        corpus.entries[o].unit.qualname == parent
        and corpus.entries[o].unit.kind in ("function", "method")
        for o in corpus.file_entries[entry.file]
    )
