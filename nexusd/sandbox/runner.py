"""Run the configured checks on an exact snapshot, one at a time, on the chosen backend.

The snapshot is a git tree (a checkpoint's commit, or a temporary snapshot of the
working tree made through a throw-away index); it is exported (`export.tree_tar`) into
the sandbox's workspace, so the live working tree is never mounted or changed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from nexusd.config import Config
from nexusd.errors import SandboxError
from nexusd.paths import RepoLayout
from nexusd.sandbox.backends import BACKENDS, RunContext
from nexusd.sandbox.export import stored_as_is
from nexusd.sandbox.pool import WarmPool
from nexusd.sandbox.probe import FALLBACK_PREFIX, ISOLATED, Choice, choose
from nexusd.sandbox.record import record_choice
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.spec import CheckSpec, check_specs
from nexusd.sandbox.workspace import archive, left_out_warning, resolve_snapshot


def run_checks(
    layout: RepoLayout,
    config: Config,
    *,
    treeish: str | None = None,
    names: Sequence[str] = (),
    when: str | None = None,
    pool: WarmPool | None = None,
) -> tuple[CheckResult, ...]:
    """Run the selected checks on `treeish` (None: the working tree as it is now)."""
    specs = check_specs(config, names, when)
    if not specs:
        return ()
    limit = config.checkpoint.max_untracked_file_bytes
    tree, left_out = resolve_snapshot(layout, treeish, max_untracked_bytes=limit)
    # An as-is checkpoint holds its files' bytes as they were on disk: not converted again.
    as_is = treeish is not None and stored_as_is(layout, treeish)
    tree_tar = archive(layout, tree, as_is=as_is)
    choice = choose(config, sorted({spec.image for spec in specs}))
    record_choice(layout, choice, config.sandbox.backend)
    ro_binds = tuple(config.sandbox.ro_binds)
    # Said before the backend's own warnings: docker left, or files left out, change what
    # the result means.
    first = (
        *((choice.fallback,) if choice.fallback else ()),
        *((left_out_warning(left_out),) if left_out else ()),
    )
    results = []
    for spec in specs:
        result = run_one(spec, tree_tar, choice, pool=pool, ro_binds=ro_binds)
        results.append(dataclasses.replace(result, tree=tree, warnings=(*first, *result.warnings)))
    return tuple(results)


def run_one(
    spec: CheckSpec,
    tree_tar: bytes,
    choice: Choice,
    *,
    pool: WarmPool | None = None,
    ro_binds: Sequence[str] = (),
) -> CheckResult:
    """One check on one backend; a sandbox failure becomes an `error` result, not a crash."""
    started = time.monotonic()
    try:
        backend = BACKENDS[choice.backend]
        return backend(spec, tree_tar, RunContext(choice, pool=pool, ro_binds=ro_binds))
    except SandboxError as exc:
        return CheckResult(
            name=spec.name,
            backend=choice.backend,
            exit_code=None,
            duration_ms=int((time.monotonic() - started) * 1000),
            isolated=ISOLATED[choice.backend],
            reason=choice.reason,
            error=str(exc),
        )


def fallback_notes(results: Sequence[CheckResult]) -> tuple[str, ...]:
    """The distinct `auto` fallback notes of these results (for the response's warnings)."""
    notes = (w for r in results for w in r.warnings if w.startswith(FALLBACK_PREFIX))
    return tuple(dict.fromkeys(notes))


def overall_status(results: Sequence[CheckResult]) -> str:
    """`passed` when every check passed, `none` without checks, else `failed`."""
    if not results:
        return "none"
    return "passed" if all(r.status == "passed" for r in results) else "failed"


def note_payload(results: Sequence[CheckResult]) -> dict[str, Any]:
    """What goes into the checkpoint's note under `checks`."""
    return {
        "checks": {
            "status": overall_status(results),
            "tree": results[0].tree if results else "",
            "results": {r.name: r.to_dict() for r in results},
        }
    }


def attach_results(layout: RepoLayout, commit_or_id: str, results: Sequence[CheckResult]) -> None:
    """Record results on a checkpoint as a git note (`refs/notes/nexus`)."""
    from nexusd.checkpoint.notes import attach_note

    attach_note(layout, commit_or_id, note_payload(results))
