"""A report's own code run as the daemon runs it, for `localization_offline.py --reproduce`.

The code a report shows, with the imports the index suggests for the names it never binds,
run by `sandbox.reproduce` (the tracer, in bwrap, on `git archive` of the base commit) with
an interpreter that can import the repository: the files and functions it entered.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from _commits import partial_tar

from nexusd.code.corpus import Corpus
from nexusd.config import config_from_mapping


def reproduce_config(python: str, ro_binds: list[str]) -> Any:
    """The configuration `--reproduce` runs the reports' code with."""
    # bwrap: the one backend that mounts a host folder (the interpreter's environment).
    sandbox = {"backend": "bwrap", "ro_binds": ro_binds}
    settings = {"code": {"reproduce": {"mode": "on", "python": python}}, "sandbox": sandbox}
    return config_from_mapping(settings, "benchmark")


def ran_files(
    repo: Path, commit: str, text: str, config: Any, corpus: Corpus
) -> dict[str, Any] | None:
    """The files the report's code entered at `commit` (None: it shows no code), with the
    imports the code index suggests for the names it never binds, as the daemon runs it."""
    from nexusd.code.importable import import_lines
    from nexusd.code.snippet import free_names, runnable
    from nexusd.sandbox.reproduce import run_snippet

    snippet = runnable(text)
    if snippet.is_empty():
        return None
    export = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=repo, capture_output=True, check=False
    )
    tar: bytes = export.stdout
    missing: list[str] = []
    if export.returncode != 0:
        # A clone that lacks some blobs (a partial or pruned mirror: large data files) cannot
        # export the commit; the snapshot is then built from the blobs it has, and the
        # result counts what was left out. Only a tree it cannot read at all is not run.
        try:
            tar, missing = partial_tar(repo, commit)
        except (subprocess.CalledProcessError, OSError) as exc:
            why = export.stderr.decode("utf-8", "replace").strip().splitlines() or [str(exc)]
            return {"files": {}, "unexported": f"git archive failed: {why[0]}", "errors": []}
    known = import_lines(corpus, free_names(snippet))
    found = run_snippet(config, tar, snippet.prelude, snippet.statements, known=known)
    ran = {
        "files": dict(found.files),
        "lines": dict(found.lines),
        "errors": list(found.errors),
        "recursion": dict(found.recursion),
    }
    return ran | ({"missing": missing} if missing else {})
