"""Run a request's own code on a snapshot, in the sandbox, and say which files it reached.

`code.reproduce` decides: `auto` runs it only on an isolated backend (docker or bwrap),
`on` also as a plain subprocess, `off` never. The code comes from whoever wrote the
request, so it gets what a check gets and less: no network, the snapshot copied (never the
live tree), the sandbox's limits and `code.reproduce.timeout`. What comes back is data for
the ranking, never instructions: which workspace files the code entered, and the errors
it raised with their innermost workspace frame.
"""

from __future__ import annotations

import io
import json
import logging
import re
import secrets
import tarfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexusd.config import Config
from nexusd.paths import RepoLayout
from nexusd.protocol.inline import inline_code
from nexusd.sandbox import tracer, tracer_recursion
from nexusd.sandbox.probe import ISOLATED, Choice, choose
from nexusd.sandbox.runner import run_one
from nexusd.sandbox.spec import CheckSpec, memory_limit
from nexusd.sandbox.workspace import archive, resolve_tree

log = logging.getLogger("nexusd.sandbox")
_SCRIPT = Path(tracer.__file__).read_bytes()
# Imported by the script from its own folder, under a name no repository's module has.
_RECURSION = Path(tracer_recursion.__file__).read_bytes()
_RECURSION_NAME = "nexusd_tracer_recursion.py"
# The tracer ends the snippet itself this long before the sandbox would kill it, so
# what it saw is still printed.
_MARGIN_S = 1.5


@dataclass(frozen=True)
class Reproduction:
    """What running a request's code showed: per file, the functions it entered."""

    backend: str
    statements: int
    ran: int = 0
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Per file, the first line of every function the code entered (a unit's `start`).
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    # Per file, (first line, name) of the functions a RecursionError's stack went round.
    recursion: Mapping[str, tuple[tuple[int, str], ...]] = field(default_factory=dict)
    # The project's own imports (`import pkg`, tried for a name the code never bound) that
    # failed: the snippet's NameErrors are then the interpreter's or the environment's.
    unimported: tuple[str, ...] = ()
    timed_out: bool = False
    ms: float = 0.0
    note: str = ""  # why it did not run, or what went wrong

    def summary(self) -> str:
        """One sentence for the response: what ran, where, and what it reached (no timing:
        the same request on the same tree gives the same response)."""
        if self.note:
            return self.note
        n = len(self.files)
        entered = f"{n} repository file{'' if n == 1 else 's'}"
        if n:
            entered += " (each listed below that it entered says so)"
        said = (
            f"Ran the request's code ({self.ran} of {self.statements} statements) on "
            f"{self.backend}: it entered {entered}"
        )
        if self.timed_out:
            said += " (stopped at `code.reproduce.timeout`)"
        missing = self.missing_dependency
        if missing:
            module, where = missing
            return (
                f"{said}: the project could not be imported here, its code{where} imports "
                f"{inline_code(module)}, which the sandbox's Python lacks. {_SET_PYTHON}."
            )
        if self.errors:
            said += f"; it raised {self.errors[0]}"
        if self.recursion:
            looped = [
                f"{inline_code(name)} in {inline_code(path)}"
                for path, pairs in self.recursion.items()
                for _, name in pairs
            ]
            more = ", …" if len(looped) > 3 else ""
            said += f"; its recursion went round {', '.join(looped[:3])}{more}"
        if self.unimported:
            said += (
                f", but the project itself did not import ({inline_code(self.unimported[0])}): "
                f"{_SET_PYTHON[0].lower()}{_SET_PYTHON[1:]}"
            )
        return said + "."

    @property
    def missing_dependency(self) -> tuple[str, str] | None:
        """(module, " at `path:line`") when the project's own code failed to import a
        module the sandbox's Python lacks: nothing it showed is about the request then."""
        if self.files or not self.errors:
            return None
        found = _NO_MODULE.match(self.errors[0])
        if found is None or not found.group("where"):
            return None  # raised by the reporter's own import, not the project's code
        return found.group("module"), found.group("where")

    @property
    def warning(self) -> str | None:
        """A warning for the response's front matter when the run could not show anything
        about the request (the project did not import), else None."""
        if self.missing_dependency or self.unimported:
            return "the request's code could not run against the project: " + _SET_PYTHON
        return None


# `_error_text`'s form of a failed import inside the repository.
_NO_MODULE = re.compile(
    r"`ModuleNotFoundError: No module named '(?P<module>[\w.]+)'`(?P<where> at `.+`)?$"
)
_SET_PYTHON = (
    "Set `code.reproduce.python` to an interpreter this code supports, with its dependencies "
    "installed"
)


def reproduce(
    layout: RepoLayout,
    config: Config,
    prelude: Sequence[str],
    statements: Sequence[str],
    known: Mapping[str, Sequence[str]] | None = None,
) -> Reproduction | None:
    """Run the statements on a snapshot of the working tree; None when nothing is to run
    or `code.reproduce.mode` is off. `known`: for names the statements read but never
    bind, import statements that bind them from the repository (`run_snippet`)."""
    settings = config.code.reproduce
    if settings.mode == "off" or not statements:
        return None
    choice = choose(config, [config.sandbox.image])
    if settings.mode == "auto" and not ISOLATED[choice.backend]:
        return Reproduction(
            choice.backend,
            len(statements),
            note="The request's code was not run: no isolated sandbox (docker or bwrap) is "
            "available; `nexusd doctor` shows how to get one, `code.reproduce.mode: on` "
            "runs it as a plain subprocess.",
        )
    limit = config.checkpoint.max_untracked_file_bytes
    tree_tar = archive(layout, resolve_tree(layout, None, max_untracked_bytes=limit))
    return run_snippet(config, tree_tar, prelude, statements, known=known, choice=choice)


def run_snippet(
    config: Config,
    tree_tar: bytes,
    prelude: Sequence[str],
    statements: Sequence[str],
    *,
    known: Mapping[str, Sequence[str]] | None = None,
    choice: Choice | None = None,
) -> Reproduction:
    """Run the statements on an exported tree with the tracer; never raises for the code.

    `known` maps a name the statements may lack to the import statements tried, untraced,
    when running them raises NameError for it (the code index knows who defines what)."""
    settings = config.code.reproduce
    choice = choice or choose(config, [config.sandbox.image])
    budget = max(settings.timeout - _MARGIN_S, 0.5)
    token = secrets.token_hex(16)
    spec_json = json.dumps(
        {
            "prelude": list(prelude),
            "statements": list(statements),
            "known": {name: list(lines) for name, lines in (known or {}).items()},
            "budget": budget,
            "token": token,
        }
    )
    folder = tracer.FOLDER
    spec = CheckSpec(
        name="reproduce",
        run=f"{settings.python} {folder}/tracer.py {folder}/snippet.json",
        image=config.sandbox.image,
        timeout=float(settings.timeout),
        memory_bytes=memory_limit(settings.memory, "code.reproduce.memory"),
        cpus=config.sandbox.cpus,
        pids=config.sandbox.pids,
        # Only the tracer's line is printed (the snippet's output is discarded).
        output_limit=max(config.sandbox.output_limit_bytes, 2_000_000),
    )
    tar = _with_files(
        tree_tar,
        {
            f"{folder}/tracer.py": _SCRIPT,
            f"{folder}/{_RECURSION_NAME}": _RECURSION,
            f"{folder}/snippet.json": spec_json.encode(),
        },
    )
    started = time.monotonic()
    result = run_one(spec, tar, choice, ro_binds=tuple(config.sandbox.ro_binds))
    ms = round((time.monotonic() - started) * 1000.0, 1)
    found = _parsed(result.stdout_head + result.stdout_tail, token)
    if found is None:
        why = result.error or f"exit {result.exit_code}: {result.stderr_head.strip()[-200:]}"
        if result.timed_out:
            why = f"it ran past code.reproduce.timeout ({settings.timeout:g} s)"
        log.info("reproduction gave no result: %s", why)
        return Reproduction(
            choice.backend,
            len(statements),
            ms=ms,
            note=f"The request's code was run on {choice.backend} but gave no result ({why}).",
        )
    return Reproduction(
        choice.backend,
        len(statements),
        ran=int(found.get("ran") or 0),
        files={str(p): tuple(map(str, names)) for p, names in found["files"].items()},
        lines=_lines(found.get("lines")),
        errors=tuple(_error_text(e) for e in found.get("errors") or () if isinstance(e, dict)),
        recursion=_recursion(found.get("recursion")),
        unimported=_texts(found.get("unimported")),
        timed_out=bool(found.get("timed_out")),
        ms=ms,
    )


def _lines(value: object) -> dict[str, frozenset[int]]:
    """The tracer's first lines per file; anything not shaped so is dropped (an older
    tracer sends none)."""
    if not isinstance(value, dict):
        return {}
    return {
        str(path): frozenset(n for n in found if isinstance(n, int) and not isinstance(n, bool))
        for path, found in value.items()
        if isinstance(found, list)
    }


def _recursion(value: object) -> dict[str, tuple[tuple[int, str], ...]]:
    """The tracer's `[path, first line, name]` triples per file, sorted; anything not shaped
    so is dropped (an older tracer sends none)."""
    found: dict[str, set[tuple[int, str]]] = {}
    for item in value if isinstance(value, list) else ():
        if not (isinstance(item, list) and len(item) == 3):
            continue
        path, line, name = item
        if isinstance(path, str) and type(line) is int and isinstance(name, str):
            found.setdefault(path, set()).add((line, name))
    return {path: tuple(sorted(pairs)) for path, pairs in found.items()}


def _texts(value: object) -> tuple[str, ...]:
    """A list of strings from the tracer; anything else is none (an older tracer sends none)."""
    if not isinstance(value, list):
        return ()
    return tuple(v[:300] for v in value if isinstance(v, str) and v)


def _error_text(error: dict[str, Any]) -> str:
    frame = error.get("frame")
    at = f"{frame[0]}:{frame[1]}" if isinstance(frame, list) and len(frame) >= 2 else ""
    where = f" at {inline_code(at)}" if at else ""
    return f"{inline_code(str(error.get('error', ''))[:200])}{where}"


def _with_files(tree_tar: bytes, files: Mapping[str, bytes]) -> bytes:
    """The tar with `files` appended (mode "a" writes over its end-of-archive blocks)."""
    out = io.BytesIO(tree_tar)
    with tarfile.open(fileobj=out, mode="a", format=tarfile.PAX_FORMAT) as dst:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = int(time.time())
            dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _parsed(stdout: str, token: str) -> dict[str, Any] | None:
    """The tracer's result line: the one that carries this run's token."""
    mark = f"{tracer.MARKER}{token} "
    for line in stdout.splitlines():
        if line.startswith(mark):
            try:
                value = json.loads(line[len(mark) :])
            except ValueError:
                return None
            files = value.get("files") if isinstance(value, dict) else None
            return value if isinstance(files, dict) else None
    return None
