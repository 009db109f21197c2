"""assume-unchanged and skip-worktree files: snapshotted as they are on disk, never lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.paths import find_repo

from .gitutil import git, git_state

BITS = ["--assume-unchanged", "--skip-worktree"]


@pytest.mark.parametrize("bit", BITS)
def test_a_local_edit_behind_an_index_bit_is_snapshotted_and_survives_a_restore(
    repo: Path, bit: str
) -> None:
    layout = find_repo(repo)
    (repo / "cfg.txt").write_text("v1\n")
    git(repo, "add", "cfg.txt")
    git(repo, "commit", "-qm", "v1")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "cfg.txt").write_text("v2\n")
    git(repo, "commit", "-qam", "v2")
    git(repo, "update-index", bit, "cfg.txt")
    (repo / "cfg.txt").write_text("MY PRECIOUS LOCAL EDIT\n")
    before = git_state(repo)

    snap = create_checkpoint(layout, reason="manual")
    assert git(repo, "show", f"{snap.commit}:cfg.txt") == "MY PRECIOUS LOCAL EDIT\n"
    assert git_state(repo) == before  # the real index keeps its bit

    result = restore_checkpoint(layout, cp.id)
    assert (repo / "cfg.txt").read_text() == "v1\n"
    assert result.pre_restore is not None
    held = git(repo, "show", f"{result.pre_restore.commit}:cfg.txt")
    assert held == "MY PRECIOUS LOCAL EDIT\n"
    restore_checkpoint(layout, result.pre_restore.id)
    assert (repo / "cfg.txt").read_text() == "MY PRECIOUS LOCAL EDIT\n"


def test_a_sparse_checkout_file_not_on_disk_stays_as_indexed(repo: Path) -> None:
    layout = find_repo(repo)
    for folder in ("in", "out"):
        (repo / folder).mkdir()
        (repo / folder / "f.txt").write_text(f"{folder} v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two folders")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "out" / "f.txt").write_text("out v2\n")
    (repo / "in" / "f.txt").write_text("in v2\n")
    git(repo, "commit", "-qam", "v2")
    git(repo, "sparse-checkout", "set", "--cone", "in")
    assert not (repo / "out").exists()
    (repo / "out").mkdir()
    (repo / "out" / "new.txt").write_text("untracked, outside the cone\n")

    snap = create_checkpoint(layout, reason="manual")
    # Not recorded as deleted: the sparse checkout simply never wrote it.
    assert git(repo, "show", f"{snap.commit}:out/f.txt") == "out v2\n"
    assert git(repo, "show", f"{snap.commit}:out/new.txt") == "untracked, outside the cone\n"

    result = restore_checkpoint(layout, cp.id)
    assert (repo / "in" / "f.txt").read_text() == "in v1\n"
    assert not (repo / "out" / "f.txt").exists()  # neither created nor counted as restored
    assert ("out/f.txt", "not checked out here (skip-worktree)") in [
        (c.path, c.why) for c in result.skipped
    ]
    assert "out/f.txt" not in [c.path for c in result.changes]
