"""The searchable view of the code index: lexical postings, definitions, modules, imports.

Built in memory from the stored units (a few seconds for a repository of sympy's size) and
rebuilt when the index changes; every query reads it without touching disk.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import numpy as np

from nexusd.code.definitions import Definitions
from nexusd.code.gopackages import GoPackages
from nexusd.code.lexical import Bm25, TermArray, add_arrays, decode, encode
from nexusd.code.messages import MessageIndex
from nexusd.code.modules import ModuleTable
from nexusd.code.phpnames import PhpNames
from nexusd.code.places import (
    is_auxiliary_path,
    is_test_path,
    language_family,
    minority_languages,
)
from nexusd.code.qualified import QualifiedIndex
from nexusd.code.rustmodules import RustModules
from nexusd.code.tokens import path_tokens, token_counts
from nexusd.code.units import CodeUnit, ParsedFile, module_name, normalize_path

# Path words count this many times in a file's document: a file named for the topic is
# usually the one that implements it.
PATH_WEIGHT = 2
# BM25's length normalisation for units (files keep the usual 0.75): a one-line function
# that says a word once is not a better match than the fifty-line one that works with it.
# 0.4 to 0.6 on the 110 reports of benchmarks/localization.py: Acc@1 +0.01, MRR +0.005.
UNIT_LENGTH_NORM = 0.5
# How a path-like import names a file without its extension (JS/TS resolution; Go's and
# Rust's imports are resolved by gopackages.py and rustmodules.py).
_IMPORT_EXTENSIONS = (
    ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".d.ts",
    "/index.js", "/index.ts", "/index.tsx",
)  # fmt: skip
# C and C++ headers, which `#include` names by path.
HEADERS = (".h", ".hh", ".hpp", ".hxx")
# An upper-case name of two words or more that a module binds: a setting or a constant
# (`FILE_UPLOAD_PERMISSIONS`). One word is left out: reports shout `NOTE`, `API`, `WARNING`.
CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_INSTALLED = re.compile(r"site-packages|dist-packages|python\d(?:\.\d+)?")
EMPTY: TermArray = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def unit_counts(unit: CodeUnit) -> Counter[str]:
    """The token counts of one unit: its own text, plus its name once more."""
    counts = token_counts(unit.text)
    if unit.kind != "file":
        counts.update(token_counts(unit.name))
    return counts


def slim_unit(u: CodeUnit) -> CodeUnit:
    """`u` without its text, its names interned (built directly: `replace` costs several
    times more, and an index adopts tens of thousands of units)."""
    intern = sys.intern
    return CodeUnit(
        u.path, u.kind, u.name, u.qualname, u.start, u.end, u.signature, u.doc,
        tuple(map(intern, u.defines)), tuple(map(intern, u.uses)), u.imports, u.bases,
        u.messages,
    )  # fmt: skip


class TokenCache:
    """Token arrays of parsed files, kept across corpus rebuilds (one vocabulary for all).

    Keyed by the parsed file object: the index keeps that object while its blob is current,
    so a rebuild after a checkout tokenizes only the files that changed.
    """

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self._files: dict[int, tuple[ParsedFile, list[TermArray], TermArray]] = {}

    def arrays(
        self, parsed: ParsedFile, terms: Sequence[str] | None = None
    ) -> tuple[list[TermArray], TermArray]:
        """(one array per unit but the file unit, the whole file's array with path words).

        `terms`: the units' packed token counts when the caller has them (else they are
        counted from the units' text).
        """
        found = self._files.get(id(parsed))
        if found is not None and found[0] is parsed:
            return found[1], found[2]
        if terms is None:
            every = [encode(unit_counts(u), self.vocab) for u in parsed.units]
        else:
            every = [decode(t, self.vocab) for t in terms]
        path = Counter(path_tokens(parsed.path))
        every.append(encode({w: n * PATH_WEIGHT for w, n in path.items()}, self.vocab))
        whole = add_arrays(every)
        units = every[1:-1]
        self._files[id(parsed)] = (parsed, units, whole)
        return units, whole

    def adopt(self, parsed: ParsedFile, *, terms: Sequence[str] | None = None) -> ParsedFile:
        """Tokenize `parsed` now and return it without its units' text, cached as such.

        The text is needed only for the tokens: a repository of sympy's size keeps 30 MB of
        it (and a copy of every identifier per unit) otherwise. `terms`: the units' packed
        token counts when already made (by a parser worker, or as stored), with units that
        are already slim.
        """
        units, whole = self.arrays(parsed, terms)
        del self._files[id(parsed)]
        slim = parsed
        if terms is None:
            slim = replace(parsed, units=tuple(map(slim_unit, parsed.units)))
        self._files[id(slim)] = (slim, units, whole)
        return slim

    def prune(self, live: Iterable[ParsedFile]) -> None:
        """Forget the files not in `live`."""
        keep = {id(p) for p in live}
        for key in [k for k in self._files if k not in keep]:
            del self._files[key]


@dataclass(frozen=True, slots=True)
class Entry:
    """One unit of the corpus and the file it belongs to."""

    file: int
    unit: CodeUnit


class Corpus:
    """Everything a query ranks over, for one version of the repository."""

    def __init__(
        self,
        parsed: Iterable[ParsedFile],
        cache: TokenCache | None = None,
        generated: AbstractSet[str] = frozenset(),
    ) -> None:
        """Index `parsed`; `cache` keeps each file's token arrays across rebuilds; `generated`
        are the paths `.gitattributes` marks `linguist-generated` (`Selection.select`)."""
        cache = TokenCache() if cache is None else cache
        self.files: list[ParsedFile] = sorted(parsed, key=lambda p: p.path)
        self.paths = [p.path for p in self.files]
        self.index = {path: i for i, path in enumerate(self.paths)}
        self.tests = [is_test_path(p) for p in self.paths]
        self.test_mask = np.array(self.tests, dtype=bool)
        # A generated copy (a single-header amalgamation, protoc's output) is where no fix
        # goes: ranked as examples and docs are. Its first lines say so (`f.generated`) or
        # `.gitattributes` does; the latter is not stored with the blob's parse, since the
        # same blob may be generated at one path and hand-written at another.
        self.auxiliary = [
            is_auxiliary_path(f.path) or f.generated or f.path in generated for f in self.files
        ]
        # Docs, READMEs, configuration: a request is about code far more often than not.
        self.prose = [p.language == "text" for p in self.files]
        # Code in a language the repository hardly uses: packaging, build and CI scripts.
        languages = [p.language for p in self.files]
        rare = minority_languages([language for language in languages if language != "text"])
        self.minority = [language in rare for language in languages]
        self.entries: list[Entry] = []
        unit_docs: list[TermArray] = []
        file_docs: list[TermArray] = []
        prose_docs: list[TermArray] = []
        self.file_entries: list[range] = []
        for i, parsed_file in enumerate(self.files):
            first = len(self.entries)
            units, total = cache.arrays(parsed_file)
            for unit in parsed_file.units[1:]:
                self.entries.append(Entry(i, unit))
            # Code is scored against code and prose against prose: a docs tree would
            # otherwise skew the code's word statistics and outweigh it by sheer length.
            if self.prose[i]:
                unit_docs.extend(EMPTY for _ in units)
                file_docs.append(EMPTY)
                prose_docs.append(total)
            else:
                unit_docs.extend(units)
                file_docs.append(total)
                prose_docs.append(EMPTY)
            self.file_entries.append(range(first, len(self.entries)))
        cache.prune(self.files)
        # Code files without a class or function: their text is their only unit. Not a
        # package's `__init__.py`: what it names, its modules define.
        self.unitless = np.fromiter(
            (
                i
                for i, entries in enumerate(self.file_entries)
                if not entries and not self.prose[i] and not _is_package(self.paths[i])
            ),
            dtype=np.int64,
        )
        self.entry_files = np.fromiter(
            (e.file for e in self.entries), dtype=np.int64, count=len(self.entries)
        )
        self.file_bm25 = Bm25(file_docs, cache.vocab)
        self.prose_bm25 = Bm25(prose_docs, cache.vocab)
        self.path_bm25 = Bm25([Counter(path_tokens(p)) for p in self.paths])
        self.unit_bm25 = Bm25(unit_docs, cache.vocab, b=UNIT_LENGTH_NORM)
        entry_units = [entry.unit for entry in self.entries]
        found = Definitions(entry_units, self.file_entries)
        self.defs = found.exact  # name → entries defining it
        self.defs_lower = found.lower
        self.qualified = QualifiedIndex(entry_units)
        # Module-level constants (`FILE_UPLOAD_PERMISSIONS = None` in a settings module) are
        # no unit, but a request naming one names the file that sets it.
        self.constants: dict[str, list[int]] = {}
        for i, parsed_file in enumerate(self.files):
            named = {self.entries[e].unit.name for e in self.file_entries[i]}
            for name in parsed_file.file_unit.defines:
                if name not in named and CONSTANT.fullmatch(name):
                    self.constants.setdefault(name, []).append(i)
        # Who raises or logs each message: (file, entry), entry -1 for module-level code.
        self.message_owners: list[tuple[int, int]] = []
        owned: list[tuple[int, Sequence[str]]] = []
        for i, parsed_file in enumerate(self.files):
            for e, unit in [(-1, parsed_file.file_unit), *self._entries_of(i)]:
                if unit.messages:
                    owned.append((len(self.message_owners), unit.messages))
                    self.message_owners.append((i, e))
        self.messages = MessageIndex(owned)
        # Any language's module names, for a report's dotted names; an import looks only
        # among its own language's (`module_file`).
        self._module_names = [module_name(path) for path in self.paths]
        self.modules = ModuleTable(zip(self._module_names, range(len(self.paths)), strict=True))
        # Each file's language family (`places.language_family`): C with C++, JS with TS.
        self.families = [language_family(language) for language in languages]
        self._family_modules: dict[str, ModuleTable] = {}
        self.go = GoPackages(self.paths, languages, [p.file_unit.imports for p in self.files])
        self.rust = RustModules(self.paths, languages)
        self.php = PhpNames(languages, [p.units for p in self.files])
        self.imports: list[set[int]] = [
            self._resolve(p.file_unit.imports, i) for i, p in enumerate(self.files)
        ]
        self.importers: list[set[int]] = [set() for _ in self.files]
        for i, targets in enumerate(self.imports):
            for j in targets:
                self.importers[j].add(i)

    def _entries_of(self, f: int) -> list[tuple[int, CodeUnit]]:
        return [(e, self.entries[e].unit) for e in self.file_entries[f]]

    def tested_by(self, test: int) -> list[tuple[int, float]]:
        """The source files a test exercises, with shares: the one it is named for gets all."""
        if not hasattr(self, "_tested"):
            self._tested: dict[int, list[tuple[int, float]]] = {}
        found = self._tested.get(test)
        if found is None:
            found = self._tested[test] = self._shares(test)
        return found

    def _shares(self, test: int) -> list[tuple[int, float]]:
        stem = self.paths[test].rsplit("/", 1)[-1].rsplit(".", 1)[0]
        bare = stem.removeprefix("test_").removesuffix("_test").removesuffix("_tests")
        bare = bare.removesuffix("_spec")  # RSpec: `line_length_spec.rb` tests `line_length.rb`
        # A Go test is in the package it tests, which it does not import.
        targets = [t for t in (*self.imports[test], *self.go.tested(test)) if not self.tests[t]]
        targets = self._through_barrels(test, targets)
        named = [t for t in targets if self.paths[t].rsplit("/", 1)[-1].rsplit(".", 1)[0] == bare]
        if named:
            return [(t, 1.0) for t in named]
        weights = [1.0 / (1.0 + len(self.importers[t])) for t in targets]
        total = sum(weights) or 1.0
        return [(t, wt / total) for t, wt in zip(targets, weights, strict=True)]

    def _through_barrels(self, test: int, targets: list[int]) -> list[int]:
        """`targets` with a JavaScript barrel (an `index.ts` that re-exports: `import { h }
        from '../src'`) replaced by the files behind it that define what the test uses.
        Followed one step, in JS and TS only: through Python's `__init__.py` it cost the 110
        two first places for the 106's three (benchmarks/README.md, 34th session)."""
        used = {name for unit in self.files[test].units for name in unit.uses}
        out: list[int] = []
        for j in targets:
            behind: list[int] = []
            if self.families[j] == "javascript" and not self._unit_names(j) & used:
                behind = [k for k in sorted(self.imports[j]) if self._unit_names(k) & used]
            out.extend(k for k in behind or [j] if not self.tests[k])
        return list(dict.fromkeys(out))

    def _unit_names(self, f: int) -> set[str]:
        if not hasattr(self, "_names"):
            self._names: dict[int, set[str]] = {}
        found = self._names.get(f)
        if found is None:
            found = self._names[f] = {self.entries[e].unit.name for e in self.file_entries[f]}
        return found

    def _resolve(self, imports: Iterable[str], own: int) -> set[int]:
        out = set()
        for name in imports:
            if self.go.go[own]:
                out.update(self.go.files(own, name))  # a package: a folder's files
                continue
            if self.rust.rust[own]:
                found = self.rust.file(own, name)
            elif self.php.php[own]:
                found = self.php.file(name)
            elif "/" in name or name.startswith(".") or name.endswith(HEADERS):
                found = self._import_path(name, own)
            else:
                found = self.module_file(name.replace("::", "."), self.families[own])
            if found is not None and found != own:
                out.add(found)
        return out

    def _import_path(self, name: str, own: int) -> int | None:
        """A path-like import (`./draw.js`, `../lib/x`, `util/x.h`) as a file."""
        if name.startswith("."):
            folder = self.paths[own].rsplit("/", 1)[0] if "/" in self.paths[own] else ""
            name = posixpath.normpath(posixpath.join(folder, name))
        if name.startswith(".."):
            return None
        for candidate in (name, *(name + ext for ext in _IMPORT_EXTENSIONS)):
            if candidate in self.index:
                return self.index[candidate]
        if "/" in name or name.endswith(HEADERS):
            return self.file_for_path(name)  # `#include "util/x.h"` from an include root
        return None

    def resolve_dotted(self, dotted: str) -> int | None:
        """The file a dotted name in a report means: a module, or a module and a name it
        defines (`pkg.mod.Class.method` → pkg/mod.py); None for anything looser."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            f = self.modules.named(".".join(parts[:cut]))
            if f is None:
                continue
            rest = parts[cut:]
            if not rest:
                return f
            defines = self.files[f].file_unit.defines
            return f if rest[0] in self._unit_names(f) or rest[0] in defines else None
        return None

    def module_file(self, dotted: str, family: str) -> int | None:
        """The file of a dotted module name among the files of one language family (as
        `places.language_family` names it), also under a source root (`src/pkg/mod.py`)."""
        table = self._family_modules.get(family)
        if table is None:
            table = self._family_modules[family] = ModuleTable(
                (name, f) for f, name in enumerate(self._module_names) if self.families[f] == family
            )
        return table.file(dotted)

    def ending_with(self, tail: str) -> list[int]:
        """The files whose path is `tail` or ends with `/tail` (whole path components)."""
        if not hasattr(self, "_by_path_suffix"):
            by_suffix: dict[str, list[int]] = {}
            for i, known in enumerate(self.paths):
                pieces = known.split("/")
                for k in range(len(pieces)):
                    by_suffix.setdefault("/".join(pieces[k:]), []).append(i)
            self._by_path_suffix = by_suffix
        return self._by_path_suffix.get(tail, [])

    def file_for_path(self, raw: str) -> int | None:
        """The indexed file a path in a report names: exact, else the longest unique suffix."""
        path = normalize_path(raw)
        if path in self.index:
            return self.index[path]
        parts = path.split("/")
        for k in range(len(parts)):
            hits = self.ending_with("/".join(parts[k:]))
            if len(hits) == 1:
                # `/home/me/proj/pkg/logging.py` is someone else's `logging.py` unless a
                # folder matches too, the repository's file is a bare name as well, or it
                # is a top-level module installed (`site-packages/typing_extensions.py`).
                bare = k == len(parts) - 1 and k > 0 and "/" in self.paths[hits[0]]
                if bare and not _INSTALLED.fullmatch(parts[k - 1]):
                    return None
                return hits[0]
            if hits:
                return None  # ambiguous from here on: a shorter suffix matches even more
        return None


def _is_package(path: str) -> bool:
    """A Python package's own file (`pkg/__init__.py`)."""
    return path.rsplit("/", 1)[-1] == "__init__.py"
