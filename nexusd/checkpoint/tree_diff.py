"""The files two trees differ in, with their status and lines added and deleted.

What `nexusd checkpoint diff --json` prints: the `--stat` view as data (a script wants
which files changed and how, not a patch to parse). Renames are not followed: a moved
file is one deleted and one added, as a restore would write them.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexusd.checkpoint.restore import plan_changes
from nexusd.git import run_git, split_z
from nexusd.paths import RepoLayout

_STATUS = {"add": "added", "modify": "modified", "delete": "deleted"}


@dataclass(frozen=True)
class ChangedFile:
    """One file two trees differ in; `added`/`deleted` are None for a binary file."""

    path: str
    status: str  # added | modified | deleted
    added: int | None
    deleted: int | None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "path": self.path,
            "status": self.status,
            "added": self.added,
            "deleted": self.deleted,
        }


def line_counts(numstat: bytes) -> dict[str, tuple[int | None, int | None]]:
    """path → (lines added, lines deleted) from `git diff-tree --numstat -z` (None: binary)."""
    counts: dict[str, tuple[int | None, int | None]] = {}
    for token in split_z(numstat):
        added, deleted, path = token.split("\t", 2)
        counts[path] = (
            int(added) if added.isdigit() else None,
            int(deleted) if deleted.isdigit() else None,
        )
    return counts


def changed_files(layout: RepoLayout, old_tree: str, new_tree: str) -> list[ChangedFile]:
    """The files `new_tree` changes relative to `old_tree`, by path."""
    changes = plan_changes(layout, old_tree, new_tree)
    if not changes:
        return []
    args = ("diff-tree", "-r", "-z", "--no-renames", "--numstat", old_tree, new_tree)
    counts = line_counts(run_git(layout.root, *args))
    return [
        ChangedFile(c.path, _STATUS[c.action], *counts.get(c.path, (None, None)))
        for c in sorted(changes, key=lambda c: c.path)
    ]
