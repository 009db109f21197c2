"""The code index's socket ops: pure dispatch over a CodeIndex, and the JSON of its results.

The daemon's search socket (`nexusd.memory.server`) hands every request it does not know to
`handle_code_op`; the CLI calls the same function in-process when no daemon runs, so both
paths answer the same shapes:

- `{"op": "code_search", "query": str, "k": int?}` →
  `{"ok": true, "hits": [FileHit…], "note": str | null, "query_ms": float, "tests":
  [FileHit…], "title": str}` (the best tests of the whole ranking; the title the query was
  read with, "" for none): a one-line query is its own title unless it was run at a
  prompt, a longer one's is found as a plan's is in its goal (`boilerplate.search_title`):
  its first line with words past a template's markup, a salutation and lines that only say
  there is a report (`code/chatter.py`), none where that line was run at a prompt or opens
  a code block
- `{"op": "code_symbols", "path": str}` → `{"ok": true, "found": bool, "path": str,
  "language": str?, "status": str?, "note": str, "units": [CodeUnit…]}`
- `{"op": "code_impact", "path": str, "symbol": str?}` →
  `{"ok": true, "found": bool, "impact": Impact}`
- `{"op": "code_status"}` → `{"ok": true, "status": CodeStatus}`
- `{"op": "code_update", "reset": bool?}` → `{"ok": true, "report": UpdateReport,
  "status": CodeStatus}`

A path that is not indexed answers `found: false` with a `note` saying so and why (skipped
and the reason, no kind of file the index reads, no such file), and a `hint` when the fix
is a setting, not an error: the caller decides. Bad requests answer `{"ok": false, "error": …}`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from pathlib import Path, PurePosixPath
from typing import Any

from nexusd.code.boilerplate import search_title
from nexusd.code.impact import Edge, Impact, dotted, impact
from nexusd.code.rank import FileHit, UnitHit
from nexusd.code.selection import EXCLUDED, VENDORED
from nexusd.code.service import CodeIndex, CodeResults
from nexusd.code.status import CodeStatus, UpdateReport
from nexusd.code.units import CodeUnit, normalize_path
from nexusd.errors import NexusError

CODE_OPS = ("code_search", "code_symbols", "code_impact", "code_status", "code_update")
MAX_K = 1000
EXCLUDE_HINT = (
    "`code.exclude` and `code.default_excludes` in .nexus/config.yaml choose what is "
    "indexed; `nexusd code status` lists every file skipped and why"
)
UNIT_FIELDS = ("kind", "name", "qualname", "start", "end", "signature", "doc")

Update = Callable[[bool], UpdateReport]
Extra = Callable[[], Mapping[str, Any]]


def unit_hit_from_dict(data: Mapping[str, Any]) -> UnitHit:
    """A UnitHit from `asdict(hit)` (lists back to tuples)."""
    return UnitHit(**{**data, "reasons": tuple(data.get("reasons") or ())})


def file_hit_to_dict(hit: FileHit) -> dict[str, Any]:
    """A JSON-ready FileHit, its units included."""
    return asdict(hit)


def file_hit_from_dict(data: Mapping[str, Any]) -> FileHit:
    """The inverse of `file_hit_to_dict`."""
    return FileHit(
        path=str(data["path"]),
        score=float(data["score"]),
        reasons=tuple(data.get("reasons") or ()),
        units=tuple(unit_hit_from_dict(u) for u in data.get("units") or ()),
    )


def impact_to_dict(found: Impact) -> dict[str, Any]:
    """A JSON-ready Impact."""
    return asdict(found)


def impact_from_dict(data: Mapping[str, Any]) -> Impact:
    """The inverse of `impact_to_dict`."""
    return Impact(
        path=str(data["path"]),
        symbol=data.get("symbol"),
        uses=tuple(Edge(**e) for e in data.get("uses") or ()),
        used_by=tuple(Edge(**e) for e in data.get("used_by") or ()),
        note=str(data.get("note") or ""),
    )


def unit_to_dict(unit: CodeUnit) -> dict[str, Any]:
    """What `code symbols` shows of a unit (not its words, uses or imports)."""
    return {name: getattr(unit, name) for name in UNIT_FIELDS}


def results_to_dict(results: CodeResults) -> dict[str, Any]:
    """The search answer's payload: hits, note, query_ms, tests."""
    return {
        "hits": [file_hit_to_dict(h) for h in results.hits],
        "note": results.note,
        "query_ms": results.query_ms,
        "tests": [file_hit_to_dict(h) for h in results.tests],
    }


def results_from_dict(data: Mapping[str, Any]) -> CodeResults:
    """The inverse of `results_to_dict`."""
    hits = tuple(file_hit_from_dict(h) for h in data.get("hits") or ())
    tests = tuple(file_hit_from_dict(h) for h in data.get("tests") or ())
    return CodeResults(hits, data.get("note"), float(data.get("query_ms") or 0.0), tests)


def status_of(index: CodeIndex, extra: Extra | None = None) -> CodeStatus:
    """The index's status with `extra` facts (the daemon's update count, …) merged in."""
    for _ in range(3):
        try:
            found = index.status()
            break
        except RuntimeError:
            # status() walks the file table while an update may be adding to it: read again.
            continue
    else:
        found = index.status()
    return replace(found, extra={**found.extra, **(extra() if extra else {})})


def update_answer(report: UpdateReport, status: CodeStatus) -> dict[str, Any]:
    """The answer of `code_update`."""
    return {"ok": True, "report": asdict(report), "status": status.to_dict()}


def _refuse(error: str) -> dict[str, Any]:
    return {"ok": False, "error": error}


def _search(index: CodeIndex, request: Mapping[str, Any]) -> dict[str, Any]:
    query = request.get("query")
    if not isinstance(query, str) or not query.strip():
        return _refuse("code_search needs a non-empty string `query`")
    k = request.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= MAX_K):
        return _refuse(f"code_search: `k` must be an integer from 1 to {MAX_K}")
    # A one-line query is all title; a pasted report's title is found as a plan's is in its
    # goal. Untitled, a pasted report ranked below its own plan (Acc@1 0.588 against 0.642
    # on the 165 reports; benchmarks/README.md, thirty-first session).
    title = search_title(query)
    return {"ok": True, **results_to_dict(index.search(query, k, title=title)), "title": title}


def _real_path(index: CodeIndex, path: str) -> str | None:
    """The indexed path `path` names (exact, else a unique suffix such as `shelf.py`)."""
    corpus = index.corpus
    f = corpus.file_for_path(path) if corpus is not None else None
    return corpus.paths[f] if corpus is not None and f is not None else None


def _listed(names: list[str], limit: int) -> str:
    """The first `limit` of `names` in backticks, and `…` when there are more."""
    return ", ".join(f"`{n}`" for n in names[:limit]) + (", …" if len(names) > limit else "")


def _missing(index: CodeIndex, path: str) -> tuple[str, str]:
    """(why `path` names no indexed file, what to do about it: "" for the usual hint)."""
    corpus = index.corpus
    tail = normalize_path(path)
    matches = [] if corpus is None else [corpus.paths[f] for f in corpus.ending_with(tail)]
    if len(matches) > 1:
        shown = _listed(matches, 5)
        note = f"`{path}` matches {len(matches)} indexed files ({shown}): give more of its path"
        return note, ""
    why = _why_not_indexed(index, tail)
    if why.endswith((EXCLUDED, VENDORED)):
        # The user's own setting (or its default) keeps it out: say which one to change.
        return f"`{path}` is not in the code index: {why}", EXCLUDE_HINT
    return f"`{path}` is not in the code index" + (f": {why}" if why else ""), ""


def _why_not_indexed(index: CodeIndex, tail: str) -> str:
    """Why the file `tail` names (a path, or a unique end of one) is not indexed: skipped
    and why, of no kind the index reads, not known to git, or no file at all. Asked again of
    git, as an update would: only this error pays for it."""
    from nexusd.code.selection import list_files

    root = index.layout.root
    try:
        files = list_files(root)
    except NexusError:
        return ""
    named = [f.path for f in files if f.path == tail or f.path.endswith(f"/{tail}")]
    if len(named) != 1:
        return "" if named else _not_listed(root, tail)
    found = index.select(files)
    real = named[0]
    shown = "" if real == tail else f" (`{real}`)"
    if real in found.skipped:
        return f"skipped{shown}: {found.skipped[real]}"
    if real not in found.wanted:
        return f"not a kind of file the code index reads{shown}"
    return f"not indexed yet{shown}: an update is running or has not seen it; try again"


def _not_listed(root: Path, tail: str) -> str:
    """Why a path no file git lists ends with is not indexed."""
    rel = PurePosixPath(tail)
    if rel.is_absolute() and rel.is_relative_to(root.as_posix()):
        rel = rel.relative_to(root.as_posix())
    if rel.is_absolute() or ".." in rel.parts:
        return "it is outside the repository, and only the repository's files are indexed"
    full = root / rel
    try:
        if full.is_symlink():
            return "it is a symbolic link, and links are never followed"
        if rel.parts[:1] == (".git",):
            return "it is inside `.git`, git's own folder"
        for folder in reversed(rel.parents[:-1]):  # from the top down
            if (root / folder).is_symlink():
                return f"it is reached through `{folder}`, a symbolic link, never followed"
            if (root / folder / ".git").exists():
                return f"it is inside `{folder}`, a submodule or another git repository"
        if full.exists():
            if full.is_dir():
                return "it is a folder: name one file in it"
            if not full.is_file():
                return "it is not a regular file (a FIFO, socket or device): git tracks none"
            return _untracked_why(root, rel.as_posix())
    except (OSError, ValueError):  # a name too long to be a file, a NUL
        pass
    return "no such file in the repository"


def _untracked_why(root: Path, rel: str) -> str:
    """Why git lists no untracked, regular file `rel`: ignored, or said by `git status`."""
    from nexusd.git import git_run

    if git_run(root, "check-ignore", "-q", "--", rel).returncode == 0:
        return "git does not track it and .gitignore excludes it"
    return "git does not list it (`git status` says why)"


def _symbols(index: CodeIndex, request: Mapping[str, Any]) -> dict[str, Any]:
    path = request.get("path")
    if not isinstance(path, str) or not path.strip():
        return _refuse("code_symbols needs a string `path`")
    real = _real_path(index, path)
    parsed = index.parsed(real) if real is not None else None
    if parsed is None:
        note, hint = _missing(index, path)
        answer = {"ok": True, "found": False, "path": path, "note": note, "units": []}
        return {**answer, "hint": hint} if hint else answer
    return {
        "ok": True,
        "found": True,
        "path": parsed.path,
        "language": parsed.language,
        "status": parsed.status,
        "note": parsed.note,
        "units": [unit_to_dict(u) for u in parsed.units if u.kind != "file"],
    }


def _impact(index: CodeIndex, request: Mapping[str, Any]) -> dict[str, Any]:
    path = request.get("path")
    symbol = request.get("symbol") or None
    if not isinstance(path, str) or not path.strip():
        return _refuse("code_impact needs a string `path`")
    if symbol is not None and not isinstance(symbol, str):
        return _refuse("code_impact: `symbol` must be a string")
    corpus = index.corpus
    real = _real_path(index, path)
    if corpus is None or real is None:
        note, hint = _missing(index, path)
        empty = Impact(path, symbol, (), (), note=note)
        answer = {"ok": True, "found": False, "impact": impact_to_dict(empty)}
        return {**answer, "hint": hint} if hint else answer
    parsed = index.parsed(real)
    units = parsed.units[1:] if parsed is not None else ()
    names = list(dict.fromkeys(u.qualname for u in units))  # overloads share a name
    # A dotted name's owners must match too (`Flask.nope.run` is not `Flask.run`); other
    # languages' spellings (`Receiver::changed`, `(*Server).serve`) name the dotted one.
    wanted = dotted(symbol) if symbol is not None else None
    if wanted is not None and not any(f".{u.qualname}".endswith(f".{wanted}") for u in units):
        defines = f"it defines {_listed(names, 8)}" if names else "it defines no symbols"
        empty = Impact(
            real, symbol, (), (), note=f"`{symbol}` is not defined in `{real}`; {defines}"
        )
        answer = {"ok": True, "found": False, "missing": "symbol", "impact": impact_to_dict(empty)}
        hint = _defined_elsewhere(index, wanted)
        return {**answer, "hint": hint} if hint else answer
    found = impact(corpus, path, symbol, source=lambda rel: _source(index, rel))
    return {"ok": True, "found": True, "impact": impact_to_dict(found)}


def _defined_elsewhere(index: CodeIndex, wanted: str) -> str:
    """Where else `wanted` (dotted) is defined, as a hint: a C prototype's header, or a name
    asked of the file that imports it, is meant for the file that defines it."""
    corpus = index.corpus
    if corpus is None:
        return ""
    entries = corpus.defs.get(wanted.rsplit(".", 1)[-1], [])
    owners = (corpus.entries[e] for e in entries)
    paths = sorted(
        {corpus.paths[x.file] for x in owners if f".{x.unit.qualname}".endswith(f".{wanted}")}
    )
    if len(paths) == 1:
        return f"it is defined in `{paths[0]}`: `nexusd code impact {paths[0]}:{wanted}`"
    return f"it is defined in {_listed(paths, 5)}" if paths else ""


def _source(index: CodeIndex, rel: str) -> str | None:
    """An indexed file's text as the work tree has it (None if it cannot be read)."""
    from nexusd.code.reader import read_inside

    data = read_inside(index.layout.root, rel, index.max_bytes)
    return None if isinstance(data, str) else data.decode("utf-8", "replace")


def handle_code_op(
    index: CodeIndex,
    request: Mapping[str, Any],
    *,
    update: Update | None = None,
    extra: Extra | None = None,
) -> dict[str, Any] | None:
    """Answer one code op; None when `request` is not a code op (someone else answers it).

    `update(reset)` runs an update the caller's way (the daemon counts and logs them);
    `extra()` adds facts to the status (the daemon's state and update count).
    """
    op = request.get("op")
    if not isinstance(op, str) or not op.startswith("code_"):
        return None
    try:
        if op == "code_search":
            return _search(index, request)
        if op == "code_symbols":
            return _symbols(index, request)
        if op == "code_impact":
            return _impact(index, request)
        if op == "code_status":
            return {"ok": True, "status": status_of(index, extra).to_dict()}
        if op == "code_update":
            reset = bool(request.get("reset"))
            report = update(reset) if update else _update(index, reset)
            return update_answer(report, status_of(index, extra))
    except NexusError as exc:
        return _refuse(str(exc))
    return _refuse(f"unknown op {op!r}; the code ops are {', '.join(CODE_OPS)}")


def _update(index: CodeIndex, reset: bool) -> UpdateReport:
    if reset:
        index.reset()
    return index.update()


def status_from_answer(answer: Mapping[str, Any]) -> CodeStatus:
    """The CodeStatus in a `code_status` or `code_update` answer."""
    return CodeStatus.from_dict(answer["status"])


def status_summary(status: CodeStatus) -> dict[str, Any]:
    """The code index as `nexusd status` shows it: counts and state, not per-file lists."""
    extra = status.extra
    return {
        "state": extra.get("state"),
        "files": status.files,
        "units": status.units,
        "languages": dict(status.languages),
        "complete": status.complete,
        "progress": list(status.progress) if status.progress else None,
        "skipped": sum(status.skipped.values()),
        "problems": len(status.problems),
        "updates": extra.get("updates"),
        "last_update": asdict(status.last_update) if status.last_update else None,
        "last_update_at": extra.get("last_update_at"),
        "last_error": extra.get("last_error"),
    }
