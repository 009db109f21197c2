"""The impact graph around a file or a symbol: what it uses, and who uses it.

Edges come from the index: imports between files, references by name from units of files
that import the target (or anywhere, marked as a weaker name match), subclasses by their
base names, and the tests that import the file.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexusd.code.corpus import Corpus

MAX_EDGES = 50


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
        unit = corpus.entries[defined[0]].unit
        uses = [
            Edge(corpus.paths[d.file], d.unit.start, d.unit.qualname, "calls")
            for other in unit.uses
            if other != name  # its own `def` line names it
            for e in corpus.defs.get(other, [])[:3]
            if (d := corpus.entries[e]).file != f or d.unit.name != name
        ][:MAX_EDGES]
    near = set(importers) | {f}
    for entry in corpus.entries:
        u = entry.unit
        if u.name == name and entry.file == f:
            continue
        kind = ""
        if name in u.bases or any(b.split(".")[-1] == name for b in u.bases):
            kind = "subclass"
        elif name in u.uses:
            kind = "test" if corpus.tests[entry.file] else "calls"
        if kind:
            # A reference from a file that imports the target is certain; others match by name.
            certain = entry.file in near
            used_by.append(
                Edge(corpus.paths[entry.file], u.start, u.qualname, kind if certain else f"{kind}?")
            )
        if len(used_by) >= MAX_EDGES * 4:
            break
    used_by.sort(key=lambda edge: (edge.kind.endswith("?"), edge.path, edge.line))
    return Impact(real, symbol, tuple(uses), tuple(used_by[:MAX_EDGES]), note)
