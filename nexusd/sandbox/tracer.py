"""Run a request's code in the sandbox and print which repository functions it called.

A standalone script (standard library only, Python 3.8+): `reproduce.py` copies it into the
snapshot it exports, beside the snippet, and runs `python .nexusd-reproduce/tracer.py
.nexusd-reproduce/snippet.json` there. The prelude (the snippet's imports) runs untraced;
then each statement runs in one namespace, as at a prompt, with a profile hook recording
each function of the workspace it enters. A statement that raises ends only itself, its
innermost workspace frame kept (and for a RecursionError, the functions it went round).
The budget ends the run early and the result is still printed, as one line after MARKER
on the real standard output: what the snippet prints goes elsewhere. The recursion limit
the snippet sets or reads is its own: the tracer keeps its room on top of it.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import io
import json
import os
import signal
import sys
import threading
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

if __package__:
    from nexusd.sandbox.tracer_recursion import Limit, looped
else:  # run as a script in the sandbox: the module is shipped beside it (reproduce.py)
    from nexusd_tracer_recursion import Limit, looped  # type: ignore[import-not-found,no-redef]

MARKER = "NEXUSD-TRACE "
FOLDER = ".nexusd-reproduce"  # where this script and its snippet are put: never a finding
MAX_LINES = 20_000  # first lines of functions recorded, in all files
# A code object of a function, lambda or comprehension (not a module's or class body's).
_CO_OPTIMIZED = 0x1
NAMES_SHOWN = 3
MAX_PACKAGES = 3
# A statement is retried this often after binding a name it lacked; this many of the
# imports suggested for a name are tried.
MAX_RETRIES = 8
MAX_IMPORTS = 3
# Once binding names took this share of the budget, no more are looked for.
IMPORTS_SHARE = 0.3
MAX_CYCLE = 12  # functions of a recursion reported, nearest the error first
# Top-level folders with an __init__.py that are not what a report's REPL imports.
_NOT_PACKAGES = ("_", "test", "doc", "example", "bench", "script", "tools", "build", "setup")


# Modules a package's build writes and git ignores (setuptools-scm's `_version.py`).
_VERSION_MODULES = frozenset({"_version", "version"})


class _VersionStandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stands in for a workspace package's version module when the snapshot lacks it: the
    build writes it and git ignores it, so `from ._version import version` would stop the
    whole package from importing where the reporter's install had it. Asked last."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> Any:
        """A spec for `pkg._version` of a package in the workspace, else None."""
        package, _, leaf = fullname.rpartition(".")
        if not package or leaf not in _VERSION_MODULES:
            return None
        where = getattr(sys.modules.get(package), "__file__", None)
        if not where or _relative(self.root, where) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> None:
        """The default module."""
        return None

    def exec_module(self, module: ModuleType) -> None:
        """The names setuptools-scm writes, with a version that says it is unknown."""
        module.version = module.__version__ = "0+unknown"  # type: ignore[attr-defined]
        module.version_tuple = module.__version_tuple__ = (0, "unknown")  # type: ignore[attr-defined]


class _Budget(BaseException):
    """Raised into the snippet when its time is up (not an Exception: it gets through
    the snippet's own `except Exception`)."""


class _SlowImport(BaseException):
    """Raised into an import made to bind a missing name when its share of time is up."""


def _relative(root: str, filename: str) -> str | None:
    if filename.startswith("<"):  # `<request>`, `<string>`, `<frozen …>`: no file
        return None
    path = os.path.realpath(filename)
    if not path.startswith(root + os.sep):
        return None
    relative = path[len(root) + 1 :].replace(os.sep, "/")
    return None if relative.startswith(FOLDER + "/") else relative


def main(argv: list[str]) -> int:
    """Run the snippet named by argv[1] in the current folder; print the calls as JSON."""
    root = str(Path.cwd().resolve())
    spec_file = Path(argv[1])
    spec: dict[str, Any] = json.loads(spec_file.read_text(encoding="utf-8"))
    # Its token is what makes the result line ours (a workspace this user may not change
    # keeps it, but the snippet's output goes to /dev/null anyway).
    with contextlib.suppress(OSError):
        spec_file.unlink()
    sys.path.insert(0, root)
    if (Path(root) / "src").is_dir():
        # A `src/` layout: the reporter's `import pkg` found the package there, installed.
        sys.path.insert(1, str(Path(root) / "src"))
    sys.meta_path.append(_VersionStandIn(root))
    # Only this script writes to the real standard output: the snippet's writes (also
    # through sys.__stdout__, or by a child process) go to /dev/null.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    # Per file entered, the names of the functions entered (a few go in the reason) and
    # their first lines: which of a file's functions ran (names alone do not tell one
    # class's `__init__` from another's). A module's or class body's own code, which runs
    # when it is imported, enters the file but is neither.
    called: dict[str, set[str]] = {}
    lines: dict[str, set[int]] = {}
    paths: dict[str, str | None] = {}
    count = [0]  # first lines recorded
    capped = [False]  # more than MAX_LINES: none are sent
    tracing = [False]
    limit = Limit()
    limit.install()
    depth = 0  # calls the hook saw start and not end, since `run` set it

    def hook(frame: FrameType, event: str, arg: object) -> None:
        nonlocal depth
        if event == "return":
            depth -= 1
            if depth < limit.below:
                limit.unchecked = 0
        elif event == "call":
            depth += 1
            if depth > limit.deep and depth > limit.unchecked:
                ahead = limit.room(frame)
                if ahead < 0:
                    return  # it raises before its first line runs: not entered
                limit.unchecked = depth + ahead
                limit.below = depth - ahead // 2
            if tracing[0]:
                record(frame)

    def thread_hook(frame: FrameType, event: str, arg: object) -> None:
        # The depth counted is the main thread's: a thread's calls only count as entered.
        if event == "call" and tracing[0]:
            record(frame)

    def record(frame: FrameType) -> None:
        code = frame.f_code
        filename = code.co_filename
        if filename not in paths:
            paths[filename] = _relative(root, filename)
        path = paths[filename]
        if path is None:
            return
        names = called.setdefault(path, set())
        if not code.co_flags & _CO_OPTIMIZED:
            return
        if not code.co_name.startswith("<"):  # not `<lambda>`, `<genexpr>`, `<listcomp>`
            names.add(code.co_name)
        seen = lines.setdefault(path, set())
        if code.co_firstlineno in seen:
            return
        if count[0] >= MAX_LINES:
            capped[0] = True
        else:
            seen.add(code.co_firstlineno)
            count[0] += 1

    importing = [False]

    def expire(signum: int, frame: object) -> None:
        raise _SlowImport() if importing[0] else _Budget()

    errors: list[dict[str, Any]] = []
    recursion: dict[tuple[str, int], str] = {}  # (path, first line) → function name
    ran = 0
    timed_out = False
    namespace: dict[str, Any] = {"__name__": "__main__"}
    signal.signal(signal.SIGALRM, expire)
    budget = float(spec.get("budget", 5.0))
    signal.setitimer(signal.ITIMER_REAL, budget)
    sink = io.StringIO()

    def run(source: str, traced: bool) -> None:
        nonlocal depth
        code = compile(source, "<request>", "exec")
        # Set again for each statement: one before may have unset it (`cProfile`).
        depth = limit.unchecked = limit.below = 0
        sys.setprofile(hook)
        threading.setprofile(thread_hook)
        tracing[0] = traced
        try:
            exec(code, namespace)
        finally:
            tracing[0] = False
            sys.setprofile(None)
            limit.floor()

    known: dict[str, list[str]] = spec.get("known") or {}
    spent = [0.0]  # seconds of those imports: a slow module must not eat the whole budget
    tried: set[str] = set()
    imported = [False]
    unimported: list[str] = []  # the project's own imports that failed, with why

    def supply(exc: NameError) -> bool:
        """Bind what a NameError lacked, untraced; False when nothing more can be tried."""
        # REPL lines often take the project as imported (`>>> from pkg import *` left out).
        if not imported[0]:
            imported[0] = True
            for line in _package_imports(root):
                failed = _quietly(run, line)
                if failed is not None and len(unimported) < MAX_PACKAGES:
                    # Said with the result: the snippet's NameErrors are then this import's.
                    unimported.append(f"{line}: {failed}"[:300])
            return True
        # Else a name the reporter bound off-screen that the repository can bind (`x` of a
        # module of symbols, `Permutation`, `xr`): the imports the code index suggested.
        name = _missing_name(exc)
        if name is None or name in tried or spent[0] >= budget * IMPORTS_SHARE:
            return False
        tried.add(name)
        started = time.monotonic()
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        allowed = max(budget * IMPORTS_SHARE - spent[0], 0.01)  # 0 would disarm the timer
        # The alarm is the imports' own only when it comes before the run's.
        own_timer = importing[0] = allowed < left
        if own_timer:
            signal.setitimer(signal.ITIMER_REAL, allowed)
        try:
            for line in known.get(name, ())[:MAX_IMPORTS]:
                if _quietly(run, line) is None and name in namespace:
                    return True
            return False
        except _SlowImport:
            return False
        finally:
            importing[0] = False
            took = time.monotonic() - started
            spent[0] += took
            if own_timer:  # the run's own clock again, less what the imports took
                signal.setitimer(signal.ITIMER_REAL, max(left - took, 0.001))

    try:
        with redirect_stdout(sink), redirect_stderr(sink):
            for i, source in enumerate(spec["prelude"] + spec["statements"]):
                traced = i >= len(spec["prelude"])
                ran += traced
                try:
                    for _attempt in range(MAX_RETRIES):
                        try:
                            run(source, traced)
                            break
                        except NameError as exc:
                            if not traced or not supply(exc):
                                raise
                    else:
                        run(source, traced)
                except _Budget:
                    timed_out = True
                    break
                except BaseException as exc:  # the snippet's own failure is a finding
                    errors.append(_error(root, exc))
                    recursion.update(_cycle(root, exc))
                sink.seek(0)
                sink.truncate()
    except _Budget:
        timed_out = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    result = {
        # A few names per file, for its reason: the output stays small on big runs.
        "files": {path: sorted(names)[:NAMES_SHOWN] for path, names in called.items()},
        # Cut short, they would mark functions that ran as not run.
        "lines": {} if capped[0] else {path: sorted(found) for path, found in lines.items()},
        "errors": errors[:20],
        # The functions a recursion went round: a fix breaks it somewhere along them.
        "recursion": [[path, line, name] for (path, line), name in sorted(recursion.items())],
        "unimported": unimported,
        "ran": ran,
        "timed_out": timed_out,
    }
    out.write(MARKER + str(spec.get("token", "")) + " " + json.dumps(result) + "\n")
    out.flush()
    return 0


def _quietly(run: Any, line: str) -> str | None:
    """Run an import untraced; None when it worked, else why not (a module that does not
    import is skipped, and one that exits while imported is no error of the request's code)."""
    try:
        run(line, False)
    except (Exception, SystemExit) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _missing_name(exc: NameError) -> str | None:
    """The name a NameError is about (`exc.name` from Python 3.10, else its message)."""
    name = getattr(exc, "name", None)
    if isinstance(name, str):
        return name
    parts = str(exc).split("'")
    return parts[1] if len(parts) >= 3 else None


def _package_imports(root: str) -> list[str]:
    """`import pkg` and `from pkg import *` for the workspace's top-level packages."""
    lines: list[str] = []
    for base in (Path(root), Path(root) / "src"):
        if not base.is_dir():
            continue
        for entry in sorted(base.iterdir()):
            name = entry.name
            wanted = name.isidentifier() and not name.startswith(_NOT_PACKAGES)
            if wanted and (entry / "__init__.py").is_file():
                lines += [f"import {name}", f"from {name} import *"]
    return lines[: 2 * MAX_PACKAGES]


def _error(root: str, exc: BaseException) -> dict[str, Any]:
    frames = [
        (path, frame.lineno, frame.name)
        for frame in traceback.extract_tb(exc.__traceback__)
        for path in [_relative(root, frame.filename)]
        if path is not None
    ]
    try:
        said = str(exc)
    except Exception:  # the snippet's own `__str__`: its failure is not the tracer's
        said = "<unprintable>"
    message = f"{type(exc).__name__}: {said}"[:300]
    return {"error": message, "frame": list(frames[-1]) if frames else None}


def _cycle(root: str, exc: BaseException) -> dict[tuple[str, int], str]:
    """The workspace functions a RecursionError went round (tracer_recursion.looped)."""
    found = looped(exc, lambda filename: _relative(root, filename))
    return dict(list({(path, first): name for path, first, name in found}.items())[:MAX_CYCLE])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
