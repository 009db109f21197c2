"""In a repository shared by a group, what checkpoints make under .git is shared like git's own."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.shared import PERM_EVERYBODY, PERM_GROUP, parse_shared, shared_mode
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.paths import find_repo

from .gitutil import git


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _shared_repo(tmp_path: Path, shared: str) -> Path:
    root = tmp_path / "shared"
    git(tmp_path, "init", "-q", f"--shared={shared}", str(root))
    (root / "a.txt").write_text("one\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "one")
    return root


@pytest.mark.parametrize("shared", ["group", "all", "0640"])
def test_folders_and_the_lock_follow_core_shared_repository(tmp_path: Path, shared: str) -> None:
    root = _shared_repo(tmp_path, shared)
    layout = find_repo(root)
    cp = create_checkpoint(layout, reason="manual")
    (root / "a.txt").write_text("two\n")
    restore_checkpoint(layout, cp.id)

    # git made refs/nexus/ for the checkpoint refs: our folders must look the same.
    gits = _mode(root / ".git" / "refs" / "nexus")
    assert gits & stat.S_ISGID
    nexus = root / ".git" / "nexus"
    for folder in (nexus, nexus / "tmp"):
        assert _mode(folder) == gits, folder
    lock = _mode(nexus / "restore.lock")
    assert lock == shared_mode(0o600, parse_shared(shared), is_dir=False)
    if shared in ("group", "all"):
        assert lock & 0o060 == 0o060  # another member of the group can take the lock


def test_a_folder_made_before_is_put_right(tmp_path: Path) -> None:
    root = _shared_repo(tmp_path, "group")
    tmp = root / ".git" / "nexus" / "tmp"
    tmp.mkdir(parents=True)
    tmp.chmod(0o755)  # as an older nexusd left it
    (tmp.parent / "restore.lock").touch(mode=0o600)

    layout = find_repo(root)
    cp = create_checkpoint(layout, reason="manual")
    (root / "a.txt").write_text("two\n")
    restore_checkpoint(layout, cp.id)

    assert _mode(tmp) & 0o2070 == 0o2070
    assert _mode(tmp.parent) & 0o2070 == 0o2070
    assert _mode(tmp.parent / "restore.lock") & 0o060 == 0o060


def test_a_repository_not_shared_keeps_the_umask(repo: Path) -> None:
    layout = find_repo(repo)
    create_checkpoint(layout, reason="manual")
    # What the umask gives, as git's own folders: nothing group-writable added.
    assert _mode(repo / ".git" / "nexus" / "tmp") == _mode(repo / ".git" / "refs")


@pytest.mark.parametrize(
    ("value", "perm"),
    [
        (None, PERM_GROUP),
        ("true", PERM_GROUP),
        ("group", PERM_GROUP),
        ("1", PERM_GROUP),
        ("all", PERM_EVERYBODY),
        ("everybody", PERM_EVERYBODY),
        ("2", PERM_EVERYBODY),
        ("0660", -0o660),
        ("0640", -0o640),
        ("umask", 0),
        ("false", 0),
        ("0", 0),
    ],
)
def test_the_setting_is_read_as_git_reads_it(value: str | None, perm: int) -> None:
    assert parse_shared(value) == perm


def test_modes_are_gits() -> None:
    # Values of git's calc_shared_perm / adjust_shared_perm for a 022 umask.
    assert shared_mode(0o755, PERM_GROUP, is_dir=True) == 0o2775
    assert shared_mode(0o644, PERM_GROUP, is_dir=False) == 0o664
    assert shared_mode(0o600, PERM_GROUP, is_dir=False) == 0o660
    assert shared_mode(0o444, PERM_GROUP, is_dir=False) == 0o444
    assert shared_mode(0o755, PERM_EVERYBODY, is_dir=True) == 0o2775
    assert shared_mode(0o600, PERM_EVERYBODY, is_dir=False) == 0o664
    assert shared_mode(0o755, -0o640, is_dir=True) == 0o2750
    assert shared_mode(0o600, -0o640, is_dir=False) == 0o640
    assert shared_mode(0o644, 0, is_dir=False) == 0o644
