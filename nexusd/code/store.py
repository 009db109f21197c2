"""The LanceDB tables of the code index, beside the memory index: files and units.

Table `code_files`, one row per indexed file: path, blob (git blob id), language, status,
note. Table `code_units`, one row per unit (see `units.CodeUnit`), with the file's path and
blob. A file whose (path, blob) is already stored is never parsed again; the tables are
derived and `nexusd code reindex` rebuilds them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from nexusd.atomic import atomic_write_bytes
from nexusd.code.units import CodeUnit, ParsedFile
from nexusd.errors import IndexStoreError
from nexusd.lance import WriteGuard, import_lancedb, local_folder

log = logging.getLogger("nexusd.code")
FILES = "code_files"
UNITS = "code_units"
# Beside the tables: the lock writers hold, and a token each write replaces (see `writing`).
LOCK_FILE = "code.lock"
GENERATION_FILE = "code.generation"
# And the paths `.gitattributes` marks linguist-generated, as the last update found them: a
# process that only opens the index (no listing) ranks them as the one that updated it.
GENERATED_FILE = "code.generated.json"
_BATCH = 500
# What the stored units were parsed by: raised when parsing changes what it stores for a
# blob that did not change (2: Python's `mod.py` and `index.py` are modules of their own;
# 3: identifiers in any script, `café_name`; 4: `3d` of `axes3d` and of "a 3d plot" is a
# token; 5: a message split over adjacent literals, `"… to be " "combined"`, is one; 6: files
# say whether a tool generated them; 7: Rust's `macro_rules!` and C's function-like macros
# are units; 8: JavaScript's `Layer.prototype.handle = function …` is a unit, a C++ `.h`
# is read as C++, flex's and Bison's output is generated; 9: such assignments in a
# function's body, and TypeScript's, are units too; 10: a message piece that opens with a
# label, `error: …`, is kept without it too; 11: C and C++ attribute-like macros are
# blanked before parsing, a Python file's UTF-8 byte order mark is dropped; 12: not a macro
# heading a function whose brace is on the next line; 13: a function set on an object,
# `Runner.prototype.stop = …` or an ES5 constructor's `this.run = …`, is a method; 14: a test
# framework's block, `it("pads the year", () => …)`, is a unit; 15: PHP and Ruby files have
# units through their grammars instead of line windows; 16: PHP's namespaces prefix
# qualnames, Ruby's methods in calls and branches are units, a file of long docblock lines is
# no minified one; 17: a function a call wraps, `const B = forwardRef((p, r) => {…})`, is the
# unit `B`, Ruby's `class A::B` is `A.B`, a comment inside a PHP header ends no signature;
# 18: a Ruby module that defines methods, a mixin, is a unit as a class is), so that an
# index parsed before is rebuilt rather than kept until each file is edited.
PARSER_VERSION = b"18"
_PARSER_KEY = b"nexusd_parser"
_LIST_FIELDS = ("defines", "uses", "imports", "bases", "messages")


def _schemas() -> tuple[Any, Any]:
    import pyarrow as pa

    files = pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("blob", pa.string(), nullable=False),
            pa.field("language", pa.string()),
            pa.field("status", pa.string()),
            pa.field("note", pa.string()),
            pa.field("generated", pa.bool_()),
        ]
    )
    units = pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("blob", pa.string(), nullable=False),
            pa.field("ordinal", pa.int32()),
            pa.field("kind", pa.string()),
            pa.field("name", pa.string()),
            pa.field("qualname", pa.string()),
            pa.field("line_start", pa.int32()),
            pa.field("line_end", pa.int32()),
            pa.field("signature", pa.string()),
            pa.field("doc", pa.string()),
            *(pa.field(name, pa.list_(pa.string())) for name in _LIST_FIELDS),
            pa.field("terms", pa.string()),
        ],
        metadata={_PARSER_KEY: PARSER_VERSION},
    )
    return files, units


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _text(value: str) -> str:
    """`value` as LanceDB can store it: a lone surrogate (a docstring's "\\udce9" escape)
    made every write of the batch fail."""
    return value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")


def _file_row(parsed: ParsedFile, blob: str) -> dict[str, Any]:
    return {
        "path": parsed.path,
        "blob": blob,
        "language": parsed.language,
        "status": parsed.status,
        "note": _text(parsed.note),
        "generated": parsed.generated,
    }


def _unit_rows(parsed: ParsedFile, blob: str, terms: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {
            "path": parsed.path,
            "blob": blob,
            "ordinal": i,
            "kind": u.kind,
            "name": u.name,
            "qualname": u.qualname,
            "line_start": u.start,
            "line_end": u.end,
            "signature": _text(u.signature),
            "doc": _text(u.doc),
            **{name: list(getattr(u, name)) for name in _LIST_FIELDS},
            # Only string literals carry escapes: names and imports are identifiers.
            "messages": [_text(m) for m in u.messages],
            "terms": packed,
        }
        for i, (u, packed) in enumerate(zip(parsed.units, terms, strict=True))
    ]


def _outdated(stored: Any, wanted: Any) -> bool:
    """Whether a stored units table lacks a column of today's, or another parser made it."""
    parser = (stored.metadata or {}).get(_PARSER_KEY)
    return bool(set(wanted.names) - set(stored.names)) or parser != PARSER_VERSION


class CodeStore:
    """The two code tables at `uri`; every LanceDB failure surfaces as IndexStoreError."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._db: Any = None
        self._files: Any = None
        self._units: Any = None
        self._guard = WriteGuard(uri, LOCK_FILE, GENERATION_FILE)
        self._wrote = False
        self._unkept: frozenset[str] | None = None  # the marks `keep_generated` could not write

    def observe(self) -> None:
        """Note which write the stored rows are at, before reading them (see `writing`)."""
        self._guard.observe()

    @contextlib.contextmanager
    def writing(self, on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
        """Hold the index's lock across processes (without it, two `nexusd code` commands
        running together stored every file twice); yields whether another process wrote
        since this one last read or wrote, in which case what it holds in memory is stale.
        `on_wait` is called once if another process holds the lock."""
        with self._guard.holding(on_wait):
            changed = self._guard.changed()
            self._guard.observe()
            self._wrote = False
            try:
                yield changed
            finally:
                if self._wrote:
                    self._guard.wrote()

    def generated(self) -> frozenset[str]:
        """The paths the last update found marked linguist-generated; none when that was
        never written or cannot be read (the next update writes it again)."""
        folder = self._guard.folder
        try:
            paths = json.loads((folder / GENERATED_FILE).read_bytes()) if folder else []
        except (OSError, ValueError, RecursionError):  # RecursionError: `[[[…` nested deep
            return frozenset()
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            return frozenset()
        return frozenset(paths)

    def keep_generated(self, paths: AbstractSet[str]) -> None:
        """Store which paths are marked linguist-generated (with the lock held), unless that
        is already what is stored; one that cannot be written is a warning, as the tables
        are still served (object storage has no folder: nothing is kept)."""
        folder = self._guard.folder
        if folder is None or paths == self.generated() or paths == self._unkept:
            return
        try:
            atomic_write_bytes(folder / GENERATED_FILE, json.dumps(sorted(paths)).encode())
            self._unkept = None  # written: the same marks may be asked for again later
        except OSError as exc:
            # Once, not at every update of an index on a read-only mount.
            self._unkept = frozenset(paths)
            log.warning("cannot keep which files are generated beside the code index: %s", exc)

    def _wrap(self, what: str, exc: Exception) -> IndexStoreError:
        return IndexStoreError(
            f"code index at {self.uri}: {what} failed ({type(exc).__name__}: {exc})",
            hint="run `nexusd code reindex` to rebuild it from the repository",
        )

    def open(self) -> None:
        """Open the tables, creating them when missing."""
        lancedb = import_lancedb()

        try:
            folder = local_folder(self.uri)
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
            self._db = lancedb.connect(self.uri)
            names = set(self._db.list_tables().tables)
            files_schema, units_schema = _schemas()
            if UNITS in names and _outdated(self._db.open_table(UNITS).schema, units_schema):
                # Written by an older nexusd (units stored their text, or another parser made
                # them): the index is derived from the repository, so it is dropped and the
                # next update rebuilds it; one that cannot be written is read as it is.
                names = self._drop_outdated(names)
            # `exist_ok`: a process reading the index may open it while another creates it.
            self._files = (
                self._db.open_table(FILES)
                if FILES in names
                else self._db.create_table(FILES, schema=files_schema, exist_ok=True)
            )
            self._units = (
                self._db.open_table(UNITS)
                if UNITS in names
                else self._db.create_table(UNITS, schema=units_schema, exist_ok=True)
            )
        except Exception as exc:
            raise self._wrap("open", exc) from exc

    def _drop_outdated(self, names: set[str]) -> set[str]:
        """Drop both tables of an outdated index; `names` without them, or as they were when
        the index cannot be written (a read-only mount still serves its searches)."""
        try:
            self.drop()
        except IndexStoreError as exc:
            log.warning("the code index was made by another version and cannot be rebuilt: %s", exc)
            return names
        return names - {FILES, UNITS}

    def drop(self) -> None:
        """Delete both tables (the memory tables beside them are kept)."""
        try:
            if self._db is None:
                self.open()
            for name in (FILES, UNITS):
                if name in set(self._db.list_tables().tables):
                    self._db.drop_table(name)
            self._files = self._units = None
            self._wrote = True
        except IndexStoreError:
            raise
        except Exception as exc:
            raise self._wrap("drop", exc) from exc

    def remove(self, paths: Sequence[str]) -> None:
        """Forget these files and their units."""
        try:
            for i in range(0, len(paths), _BATCH):
                batch = ", ".join(_sql(p) for p in paths[i : i + _BATCH])
                self._wrote = True
                self._files.delete(f"path IN ({batch})")
                self._units.delete(f"path IN ({batch})")
        except Exception as exc:
            raise self._wrap("delete", exc) from exc

    def add(self, parsed: Iterable[tuple[ParsedFile, str, Sequence[str]]]) -> None:
        """Store parsed files with their blob ids and their units' packed token counts
        (`tokens.pack_counts`, one per unit; callers removed the old rows first)."""
        file_rows: list[dict[str, Any]] = []
        unit_rows: list[dict[str, Any]] = []
        for item, blob, terms in parsed:
            file_rows.append(_file_row(item, blob))
            unit_rows.extend(_unit_rows(item, blob, terms))
        try:
            self._wrote = True
            if file_rows:
                self._files.add(file_rows)
            if unit_rows:
                self._units.add(unit_rows)
        except Exception as exc:
            raise self._wrap("write", exc) from exc

    def iter_files(self) -> Iterator[tuple[ParsedFile, str, list[str]]]:
        """Every stored file (its units without text), its blob id and its units' packed
        token counts, in path order, one at a time.

        Rows are converted batch by batch: a caller that keeps less than the rows (the index
        drops the units' text once tokenized) never holds every row as Python objects.
        """
        try:
            rows = self._files.search().limit(None).to_arrow().to_pylist()
            units = self._units.search().limit(None).to_arrow()
            units = units.sort_by([("path", "ascending"), ("ordinal", "ascending")])
        except Exception as exc:
            raise self._wrap("read", exc) from exc
        files = {row["path"]: row for row in rows}
        current: str | None = None
        pending: list[dict[str, Any]] = []
        for batch in units.to_batches(max_chunksize=2048):
            for row in batch.to_pylist():
                if row["path"] != current:
                    if current in files:
                        yield _loaded(files[current], pending)
                    current, pending = row["path"], []
                pending.append(row)
        if current in files:
            yield _loaded(files[current], pending)

    def optimize(self) -> None:
        """Compact both tables after many small updates."""
        try:
            self._files.optimize()
            self._units.optimize()
        except Exception as exc:
            raise self._wrap("optimize", exc) from exc


def _loaded(row: dict[str, Any], units: list[dict[str, Any]]) -> tuple[ParsedFile, str, list[str]]:
    return _parsed(row, units), row["blob"], [u["terms"] or "" for u in units]


def _parsed(row: dict[str, Any], units: list[dict[str, Any]]) -> ParsedFile:
    return ParsedFile(
        path=row["path"],
        language=row["language"],
        units=tuple(_unit(r) for r in units),
        status=row["status"],
        note=row["note"] or "",
        generated=bool(row.get("generated")),
    )


def _unit(row: dict[str, Any]) -> CodeUnit:
    return CodeUnit(
        path=row["path"],
        kind=row["kind"],
        name=row["name"],
        qualname=row["qualname"],
        start=int(row["line_start"]),
        end=int(row["line_end"]),
        signature=row["signature"] or "",
        doc=row["doc"] or "",
        # Interned: the same names recur across thousands of units.
        defines=tuple(map(sys.intern, row["defines"] or ())),
        uses=tuple(map(sys.intern, row["uses"] or ())),
        imports=tuple(row["imports"] or ()),
        bases=tuple(row["bases"] or ()),
        messages=tuple(row["messages"] or ()),
    )
