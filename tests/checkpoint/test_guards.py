"""What a restore leaves alone: edits saved while it runs, files ignored by the checkpoint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.paths import find_repo

from .gitutil import git


def _edit_during_the_snapshot(repo: Path, trigger: Path, command: str) -> None:
    """zzz.dat's clean filter runs `command` once `trigger` exists: while the pre-restore
    snapshot is being taken, after it has read the files before zzz.dat, like an editor
    saving while the restore runs (git adds tracked files first, untracked ones by name)."""
    script = f"if [ -e '{trigger}' ]; then rm '{trigger}'; {command}; fi; cat"
    git(repo, "config", "filter.edit.clean", script)
    (repo / ".gitattributes").write_text("zzz.dat filter=edit\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")


@pytest.mark.parametrize("kind", ["modify", "delete", "link"])
def test_an_edit_saved_while_the_restore_runs_is_kept(
    repo: Path, tmp_path: Path, kind: str
) -> None:
    layout = find_repo(repo)
    trigger = tmp_path / "trigger"
    victim = repo / "aaa.txt"
    if kind == "link":
        _edit_during_the_snapshot(repo, trigger, "ln -sfn two aaa.txt")
    else:
        _edit_during_the_snapshot(repo, trigger, "echo 'EDIT 2' > aaa.txt")
    if kind != "delete":
        victim.write_text("orig\n")
        git(repo, "add", "aaa.txt")
        git(repo, "commit", "-qm", "orig")
    cp = create_checkpoint(layout, reason="manual")
    if kind == "link":
        victim.unlink()
        victim.symlink_to("one")
    else:
        victim.write_text("edit 1\n")  # in the pre-restore snapshot
    (repo / "zzz.dat").write_text("s2\n")
    trigger.touch()

    result = restore_checkpoint(layout, cp.id)

    assert not trigger.exists()  # the edit did happen mid-snapshot
    if kind == "link":
        assert os.readlink(victim) == "two"
    else:
        assert victim.read_text() == "EDIT 2\n"
    assert ("aaa.txt", "changed since the snapshot, left as it is") in [
        (c.path, c.why) for c in result.skipped
    ]
    assert "aaa.txt" not in [c.path for c in result.changes]
    assert not (repo / "zzz.dat").exists()  # unchanged since the snapshot: restored as planned
    assert result.pre_restore is not None


def test_a_file_ignored_by_the_checkpoint_is_not_deleted(repo: Path) -> None:
    # The hostile sequence: restoring a checkpoint without .gitignore unignores the files,
    # so the next pre-restore snapshot holds them, and undoing that restore (to a tree
    # whose .gitignore ignores them again) used to delete them.
    layout = find_repo(repo)
    empty = create_checkpoint(layout, reason="manual")
    (repo / ".gitignore").write_text(".env\nnode_modules/\n.venv/\n")
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitignore").write_text("*.tmp\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ignores")
    precious = {
        ".env": "SECRET=1\n",
        "node_modules/pkg/f1.js": "module\n",
        ".venv/lib/site.py": "site\n",
        "sub/cache.tmp": "nested rule\n",
    }
    for rel, text in precious.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    first = restore_checkpoint(layout, empty.id)
    assert not (repo / ".gitignore").exists()
    assert first.pre_restore is not None

    dry = restore_checkpoint(layout, first.pre_restore.id, dry_run=True)
    undo = restore_checkpoint(layout, first.pre_restore.id)

    for result in (dry, undo):
        assert sorted(c.path for c in result.changes) == [".gitignore", "sub/.gitignore"]
        assert sorted(c.path for c in result.skipped) == sorted(precious)
    for rel, text in precious.items():
        assert (repo / rel).read_text() == text
    assert git(repo, "status", "--porcelain") == ""
