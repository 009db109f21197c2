"""What an agent may do besides memory search: read a file slice, MEMORY.md or the newest
plan, ask for a plan, run the checks, make, list and restore checkpoints, and read the
daemon's status.

Each function takes the repository, the configuration and plain values and returns
JSON-ready data; the MCP tools are thin adapters over them. Roles are checked by the
caller (`Access.require_action`), not here.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nexusd.api.daemon_side import DaemonSide
from nexusd.config import Config
from nexusd.errors import NexusError
from nexusd.paths import RepoLayout

MAX_PLAN_SECONDS = 3600.0


def request_plan(
    layout: RepoLayout,
    config: Config,
    goal: str,
    *,
    cycle: int | None = None,
    blockers: tuple[str, ...] = (),
    artifacts: tuple[str, ...] = (),
    time_box: str | None = None,
    timeout_seconds: float = 300.0,
    recall: Callable[[], Any] | None = None,
    daemon: DaemonSide,
) -> dict[str, Any]:
    """Write a Template A request into the watched folder, wait for its response (the
    daemon's, or answered in this process when no daemon runs) and return it.

    The wait ends at `timeout_seconds` either way: then the answer is `status: pending`
    with the path the response will be written to (the work goes on). `recall` gives the
    memory service an answer made here searches."""
    from nexusd.planner.grounding import Services
    from nexusd.protocol.parse import parse_request
    from nexusd.protocol.reading import read_regular_file
    from nexusd.protocol.request_files import create_request_file
    from nexusd.protocol.request_form import render_request

    if not goal.strip():
        raise NexusError("the goal is empty", hint="say what this cycle must achieve")
    text = render_request(
        goal=goal, cycle=cycle, blockers=blockers, artifacts=artifacts, time_box=time_box
    )
    parse_request(text, "<mcp request>", max_bytes=config.watch.max_request_bytes)
    root = layout.root.resolve()
    folder = (layout.root / config.watch.paths[0]).resolve()
    if not folder.is_relative_to(root) or folder == root / ".git":
        raise NexusError(
            f"refusing to write the request: the watched folder {config.get('watch.paths')[0]}"
            " resolves outside the repository (a symbolic link); nothing was written",
            hint="make it a real folder inside the repository (watch.paths are relative to"
            " its root)",
        )
    request = create_request_file(folder, text, datetime.now(UTC)).resolve()
    timeout = min(max(timeout_seconds, 1.0), MAX_PLAN_SECONDS)

    def services() -> Services:
        return Services(memory=recall() if recall is not None else None)

    answer = daemon.wait_for_plan(layout, config, request, timeout=timeout, services=services)
    if answer.note is not None:
        return {
            "request": request.relative_to(root).as_posix(),
            "response": answer.response.relative_to(root).as_posix(),
            "status": "pending",
            "answered_by": answer.by,
            "text": None,
            "note": answer.note,
        }
    body = read_regular_file(answer.response).decode("utf-8", "replace")
    return {
        "request": request.relative_to(root).as_posix(),
        "response": answer.response.relative_to(root).as_posix(),
        "status": answer.status,
        "answered_by": answer.by,
        "text": body,
    }


def latest_response(layout: RepoLayout, config: Config) -> str:
    """The newest `*_plan_response.md` in the watched folders (by time, then name) that is
    a regular file: a link planted under a predictable name is skipped, never followed."""
    from nexusd.protocol.reading import read_regular_file

    root = layout.root.resolve()
    found: list[tuple[float, str, Path]] = []
    for folder in config.watch.paths:
        base = layout.root / folder
        try:
            if not base.resolve().is_relative_to(root) or not base.is_dir():
                continue  # a watched folder linked out of the repository is not read
            names = list(base.glob("*_plan_response.md"))
        except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
            continue
        for path in names:
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found.append((st.st_mtime, path.name, path))
    for _, _, path in sorted(found, reverse=True):
        try:
            return read_regular_file(path).decode("utf-8", "replace")
        except OSError:
            continue  # gone, or swapped for a link since it was listed: the next newest
    return "(no plan response yet: request one with the request_plan tool)"


def memory_text(layout: RepoLayout, limit: int) -> str | None:
    """MEMORY.md's text (its first `limit` bytes), None when there is none; NexusError
    unless it is a regular file inside the repository (a link out is never followed)."""
    from nexusd.code.reader import read_inside

    path = layout.memory_file
    if not os.path.lexists(path):
        return None
    rel = os.path.relpath(path, layout.root)
    data = read_inside(layout.root, rel, limit + 1, head=True, inside_links=True)
    if isinstance(data, str):
        raise NexusError(
            f"refusing to serve {rel}: {data}; it is served only as a regular file inside the"
            " repository",
            hint=f"if it is a link, `rm {path}` removes the link only (nexusd creates the file"
            " again on the next memory_save)",
        )
    text = data[:limit].decode("utf-8", "replace")
    if len(data) > limit:
        text += f"\n\n<!-- cut at memory.max_file_bytes ({limit}): the rest is not indexed -->\n"
    return text


def run_checks(layout: RepoLayout, config: Config, names: tuple[str, ...]) -> dict[str, Any]:
    """Run the configured checks (or those named) in the sandbox on a snapshot."""
    from nexusd.sandbox.runner import overall_status
    from nexusd.sandbox.runner import run_checks as run

    results = run(layout, config, names=names)
    return {"status": overall_status(results), "results": [r.to_dict() for r in results]}


def checkpoint_create(layout: RepoLayout, config: Config, message: str | None) -> dict[str, Any]:
    """Snapshot the working tree (reason `manual`); HEAD, index and stash untouched."""
    from nexusd.checkpoint.snapshot import create_checkpoint

    limit = config.checkpoint.max_untracked_file_bytes
    cp = create_checkpoint(layout, reason="manual", message=message, max_untracked_bytes=limit)
    return {**cp.to_dict(), "restore_command": cp.restore_command}


def checkpoint_list(layout: RepoLayout, limit: int) -> dict[str, Any]:
    """The newest `limit` checkpoints, newest first."""
    from nexusd.checkpoint.overview import overview

    rows = overview(layout)
    return {"total": len(rows), "checkpoints": list(reversed(rows))[: max(limit, 1)]}


def checkpoint_restore(
    layout: RepoLayout, config: Config, checkpoint_id: str, *, dry_run: bool
) -> dict[str, Any]:
    """Make the working tree match a checkpoint (a `pre-restore` checkpoint first)."""
    from nexusd.checkpoint.restore import restore_checkpoint

    own = [*config.watch.paths, *config.memory.sources]
    result = restore_checkpoint(
        layout,
        checkpoint_id,
        dry_run=dry_run,
        max_untracked_bytes=config.checkpoint.max_untracked_file_bytes,
        nexus_files=[str(p) for p in own],
    )
    return {
        "checkpoint": result.checkpoint.id,
        "dry_run": dry_run,
        "changes": [{"action": c.action, "path": c.path} for c in result.changes],
        "skipped": [{"path": c.path, "why": c.why} for c in result.skipped],
        "pre_restore": result.pre_restore.id if result.pre_restore else None,
    }


def status(layout: RepoLayout, daemon: DaemonSide) -> dict[str, Any]:
    """The daemon's last published status (running, pid, uptime, answered, errors…)."""
    return daemon.describe(layout)
