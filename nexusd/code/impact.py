"""The impact graph around a file or a symbol: what it uses, and who uses it.

Edges come from the index: imports between files, references by name from units of files
that import the target (or anywhere, marked as a weaker name match), subclasses by their
base names, and the tests that import the file.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from nexusd.code.corpus import Corpus

MAX_EDGES = 50
_BUILTINS = frozenset(dir(builtins))


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


def impact(corpus: Corpus, path: str, symbol: str | None = None) -> Impact:
    """Who imports, calls or subclasses `path` (or `symbol` in it), and what it imports."""
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
    defined = [e for e in corpus.file_entries[f] if corpus.entries[e].unit.name == name]
    if not defined:
        note = f"`{symbol}` is not defined in `{real}`; showing name references anywhere"
    else:
        note = ""
        uses = _callees(corpus, f, defined[0])
    near = set(importers) | {f}
    family = _family(corpus.files[f].language)
    for entry in corpus.entries:
        u = entry.unit
        if u.name == name and entry.file == f:
            continue
        kind = ""
        if name in u.bases or any(b.split(".")[-1] == name for b in u.bases):
            kind = "subclass"
        elif name in u.uses:
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
    used_by.sort(key=lambda edge: (edge.kind.endswith("?"), edge.path, edge.line))
    return Impact(real, symbol, tuple(uses), tuple(used_by[:MAX_EDGES]), note)


def _family(language: str) -> str:
    """Languages that call each other's names directly count as one."""
    return {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}.get(language, language)


def _callees(corpus: Corpus, f: int, e: int) -> list[Edge]:
    """What unit `e` of file `f` calls, each name looked up in the same file, then in the
    files it imports (by name: `get` there counts whatever owns it, so `os.environ.get`
    can show up); elsewhere only a name one file defines (`calls?`). A function nested in
    another (a test's local helper) is never a callee from outside, nor a builtin's name."""
    unit = corpus.entries[e].unit
    reach = corpus.imports[f]
    edges: list[Edge] = []
    for other in unit.uses:
        if other == unit.name:  # its own `def` line names it
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
