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
from dataclasses import dataclass

from nexusd.code.corpus import HEADERS, Corpus
from nexusd.code.js_statements import TITLED
from nexusd.code.references import References, Source

MAX_EDGES = 50
_BUILTINS = frozenset(dir(builtins))
# Run where their class is made (`Cart(…)`, `new Cart(…)`, `Cart.new(…)`): Python, JS, PHP, Ruby.
_CONSTRUCTORS = frozenset({"__init__", "__new__", "constructor", "__construct", "initialize"})


@dataclass(frozen=True)
class Edge:
    """One relation: `path:line` of the other side, its symbol, and what kind of edge."""

    path: str
    line: int
    symbol: str
    # imports, imported-by, calls, names (a reference that is no call: `f=f`, passing it
    # on), subclass, test; `?` when it matches by name only
    kind: str


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
        note = _cut_note(uses, used_by, exact=True)
        return Impact(real, None, tuple(uses[:MAX_EDGES]), tuple(used_by[:MAX_EDGES]), note)
    symbol = dotted(symbol)
    name = symbol.split(".")[-1]
    code = References(corpus, source)
    defined = [e for e in corpus.file_entries[f] if corpus.entries[e].unit.name == name]
    if not defined:
        note = f"`{symbol}` is not defined in `{real}`; showing name references anywhere"
    else:
        note = ""
        uses = _callees(corpus, f, defined[0], code)
    owner = symbol.rsplit(".", 2)[-2] if symbol.count(".") else ""
    if name in _CONSTRUCTORS and owner:
        # `Cart.__init__` runs where `Cart(…)` is called, not where another `__init__` is.
        name = owner
        defined = [e for e in corpus.file_entries[f] if corpus.entries[e].unit.name == owner]
    top_level = bool(defined) and _top_level(corpus, defined[0])
    near = set(importers) | {f} | _header_importers(corpus, f)
    used_by = _used_by(corpus, f, name, importers, code, near=near, top_level=top_level)
    # Callers are checked only until one more than MAX_EDGES hold: "more", not how many.
    cut = _cut_note(uses, used_by, exact=False)
    note = "; ".join(n for n in (note, cut) if n)
    return Impact(real, symbol, tuple(uses[:MAX_EDGES]), tuple(used_by[:MAX_EDGES]), note)


def _top_level(corpus: Corpus, e: int) -> bool:
    """Whether unit `e` is a module's own name, which another file can import: PHP's classes
    and functions are so under their namespace (`App.Support.Money`), which has dots."""
    entry = corpus.entries[e]
    if corpus.files[entry.file].language == "php":
        return entry.unit.kind in ("class", "function")
    return "." not in entry.unit.qualname


def _cut_note(uses: list[Edge], used_by: list[Edge], *, exact: bool) -> str:
    """What a reader must know when a list is longer than MAX_EDGES: that it was cut."""
    said = []
    for title, edges in (("uses", uses), ("used by", used_by)):
        if len(edges) > MAX_EDGES:
            total = f" of {len(edges)}" if exact else ", and there are more"
            said.append(f"{title}: the first {MAX_EDGES}{total}")
    return "; ".join(said)


def _header_importers(corpus: Corpus, f: int) -> set[int]:
    """The files that include a C or C++ source file's own header (`jv.h` of `jv.c`, also
    `include/fmt/format.h` of `src/format.cc`): they call its functions through it."""
    path = corpus.paths[f]
    if corpus.families[f] != "c" or path.endswith(HEADERS):
        return set()
    stem = path.rsplit(".", 1)[0]
    found: set[int] = set()
    for suffix in HEADERS:
        beside = corpus.index.get(stem + suffix)
        if beside is not None:
            found.add(beside)
    if not found:
        # A header kept in another folder counts only when no other file has its name.
        for suffix in HEADERS:
            elsewhere = corpus.ending_with(stem.rsplit("/", 1)[-1] + suffix)
            if len(elsewhere) == 1:
                found.add(elsewhere[0])
    return {i for h in found for i in corpus.importers[h]} | found


def dotted(symbol: str) -> str:
    """A symbol as the index names it: `Receiver::changed` (Rust, C++), `JsonWriter#value`
    (Java, Ruby), `(*Server).serve` (Go) and `App\\Order->create` (PHP) are
    `Receiver.changed`, `JsonWriter.value`, `Server.serve` and `App.Order.create`.
    A test block's title, `describe("#indexOf()")`, is kept as it is written."""
    parts = TITLED.split(symbol)
    titles = TITLED.findall(symbol)
    # `Cart.#total` is JavaScript's private member, written so in the index: its `#` stays.
    out = [_JAVA_MEMBER.sub(".", _SCOPE.sub(".", _GO_RECEIVER.sub(r"\1", p))) for p in parts]
    return "".join(o + t for o, t in zip(out, [*titles, ""], strict=True)).strip(".")


_GO_RECEIVER = re.compile(r"\(\*?(\w+)\)")
_JAVA_MEMBER = re.compile(r"(?<=\w)#")
_SCOPE = re.compile(r"::|->|\\")  # C++/Rust/Ruby/PHP scopes, PHP's member arrow and namespaces


def _used_by(
    corpus: Corpus,
    f: int,
    name: str,
    importers: list[int],
    code: References,
    *,
    near: set[int],
    top_level: bool,
) -> list[Edge]:
    """Who subclasses, calls or imports `name` of file `f`, surest first; a reference from
    a file in `near` is certain. Candidates come from the index; a call is then checked
    against the source, in order, until one more than MAX_EDGES hold (so a name half the
    repository mentions reads only the files it shows, and the caller knows it cut)."""
    family = corpus.families[f]
    found: list[tuple[Edge, int]] = []  # an edge, and the entry whose code must say the name
    for e, entry in enumerate(corpus.entries):
        u = entry.unit
        if u.name == name and entry.file == f:
            continue
        kind, check = "", -1
        bases = u.bases
        if bases and (name in bases or any(b.rpartition(".")[2] == name for b in bases)):
            kind = "subclass"
        elif name in u.uses:
            kind, check = ("test" if corpus.tests[entry.file] else "calls"), e
        # A reference from a file that imports the target is certain; others in the same
        # language match by name only (`?`); other languages cannot call it by name.
        certain = entry.file in near
        if kind and (certain or corpus.families[entry.file] == family):
            edge = Edge(corpus.paths[entry.file], u.start, u.qualname, kind + "?" * (not certain))
            found.append((edge, check))
    found.sort(key=lambda item: (item[0].kind.endswith("?"), item[0].path, item[0].line))
    edges = []
    for candidate, check in found:
        kept = candidate if check < 0 else _checked(corpus, code, candidate, check, name)
        if kept is None:
            continue
        edges.append(kept)
        if len(edges) > MAX_EDGES:
            break
    # A file that imports the name itself (`from pkg.billing import Invoice`, a re-export);
    # only a top-level name can be imported, and only a file whose top level names it.
    seen = {edge.path for edge in edges}
    for i in importers if top_level else ():
        mentions = name in corpus.files[i].file_unit.uses and corpus.paths[i] not in seen
        line = code.import_line(i, name) if mentions else None
        if line is not None:
            kind = "test" if corpus.tests[i] else "imported-by"
            edges.append(Edge(corpus.paths[i], line, corpus.files[i].file_unit.qualname, kind))
    edges.sort(key=lambda edge: (edge.kind.endswith("?"), edge.path, edge.line))
    return edges


def _checked(corpus: Corpus, code: References, edge: Edge, e: int, name: str) -> Edge | None:
    """A reference edge as the source has it: a call at the line it calls from; a name
    that is no call (`request=request`, passed on) as `names`; None when only prose says it."""
    f = corpus.entries[e].file
    if not code.readable(f):
        return edge
    line = code.call_line(f, e, name)
    if line is not None:
        return Edge(edge.path, line, edge.symbol, edge.kind)
    if not code.says(f, e, name):
        return None
    kind = edge.kind.replace("calls", "names")
    return Edge(edge.path, edge.line, edge.symbol, kind)


def _callees(corpus: Corpus, f: int, e: int, code: References) -> list[Edge]:
    """What unit `e` of file `f` calls, each name looked up in the same file, then in the
    files it imports (by name: `get` there counts whatever owns it, so `os.environ.get`
    can show up); elsewhere only a name one file defines (`calls?`). A function nested in
    another (a test's local helper) is never a callee from outside, nor a builtin's name."""
    unit = corpus.entries[e].unit
    reach = corpus.imports[f]
    family = corpus.families[f]
    edges: list[Edge] = []
    for other in unit.uses:
        if other == unit.name or not code.says(f, e, other):  # its `def` line; its prose
            continue
        found = [d for d in corpus.defs.get(other, []) if d != e]  # no local one: not in defs
        sure = [d for d in found if corpus.entries[d].file == f]
        sure = sure or [d for d in found if corpus.entries[d].file in reach]
        if other in _BUILTINS and not sure:
            continue  # `open(…)` is the builtin, not the one method the repository names so
        # A guess by name only among the files of its own language: Ruby calls no PHP method.
        kin = [d for d in found if corpus.families[corpus.entries[d].file] == family]
        files = {corpus.entries[d].file for d in kin}
        guess = (
            []
            if sure or len(files) != 1
            else [d for d in kin if not corpus.tests[corpus.entries[d].file]]
        )
        # `json=json`, a parameter passed on: a name the unit uses, not a call of it.
        verb = "calls" if not code.readable(f) or code.call_line(f, e, other) else "names"
        # One edge per place and name: Rust's `impl` blocks share their struct's qualname,
        # and overloads (Java, C++) share theirs; the first is where the name is defined.
        first: dict[tuple[int, str], int] = {}
        for d in sure or guess:
            first.setdefault((corpus.entries[d].file, corpus.entries[d].unit.qualname), d)
        for d in list(first.values())[:3]:
            entry = corpus.entries[d]
            kind = verb if sure else verb + "?"
            edges.append(
                Edge(corpus.paths[entry.file], entry.unit.start, entry.unit.qualname, kind)
            )
    return edges
