"""One row per checkpoint for `nexusd checkpoint list` (and the daemon's status)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nexusd.checkpoint.listing import files_changed, list_checkpoints
from nexusd.checkpoint.model import Checkpoint
from nexusd.checkpoint.notes import check_status, notes_for
from nexusd.paths import RepoLayout


def overview(
    layout: RepoLayout, checkpoints: Sequence[Checkpoint] | None = None
) -> list[dict[str, Any]]:
    """id, time, reason, cycle, branch, files changed and check status of every checkpoint
    (or of `checkpoints`, when the caller has listed them already)."""
    listed = list(checkpoints) if checkpoints is not None else list_checkpoints(layout)
    counts = files_changed(layout, listed)
    notes = notes_for(layout, [c.commit for c in listed])
    rows: list[dict[str, Any]] = []
    for cp in listed:
        rows.append(
            {
                **cp.to_dict(),
                "files_changed": counts.get(cp.id),  # None: its trees cannot be read
                "checks": check_status(notes.get(cp.commit, {})),
            }
        )
    return rows
