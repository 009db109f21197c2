"""One row per checkpoint for `nexusd checkpoint list` (and the daemon's status)."""

from __future__ import annotations

from typing import Any

from nexusd.checkpoint.listing import files_changed, list_checkpoints
from nexusd.checkpoint.notes import check_status, notes_for
from nexusd.paths import RepoLayout


def overview(layout: RepoLayout) -> list[dict[str, Any]]:
    """id, time, reason, cycle, branch, files changed and check status of every checkpoint."""
    checkpoints = list_checkpoints(layout)
    counts = files_changed(layout, checkpoints)
    notes = notes_for(layout, [c.commit for c in checkpoints])
    rows: list[dict[str, Any]] = []
    for cp in checkpoints:
        rows.append(
            {
                **cp.to_dict(),
                "files_changed": counts.get(cp.id, 0),
                "checks": check_status(notes.get(cp.commit, {})),
            }
        )
    return rows
