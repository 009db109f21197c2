"""Broken refs and damaged checkpoints: one must never hide the others, and a restore of
one finds out before it writes anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.checkpoint.listing import drop, find, list_checkpoints, resolve, scan
from nexusd.checkpoint.model import REF_PREFIX, parse_trailers
from nexusd.checkpoint.overview import overview
from nexusd.checkpoint.remote import fetch, push
from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.errors import GitError
from nexusd.paths import find_repo

from .gitutil import git, git_state, tree_files

MISSING = "0123456789012345678901234567890123456789"
BROKEN_ID = "20200101T000000Z-000001"
BLOB_ID = "20200101T000000Z-000002"


def _remove_object(repo: Path, oid: str) -> None:
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


def test_a_ref_to_a_missing_or_non_commit_object_hides_no_other_checkpoint(repo: Path) -> None:
    layout = find_repo(repo)
    good = create_checkpoint(layout, reason="manual")
    (repo / ".git" / "refs" / "nexus" / "checkpoints" / BROKEN_ID).write_text(MISSING + "\n")
    git(repo, "update-ref", REF_PREFIX + BLOB_ID, git(repo, "rev-parse", "HEAD:README.md").strip())

    checkpoints, broken = scan(layout)
    assert [c.id for c in checkpoints] == [good.id]
    assert [(b.id, b.commit) for b in broken] == [
        (BROKEN_ID, MISSING),
        (BLOB_ID, git(repo, "rev-parse", "HEAD:README.md").strip()),
    ]
    assert "missing" in broken[0].why and "not a commit" in broken[1].why
    assert [c.id for c in list_checkpoints(layout)] == [good.id]
    assert [r["id"] for r in overview(layout)] == [good.id]
    assert resolve(layout, "latest").id == good.id

    # Naming a broken one says what is wrong with it and how to get rid of it.
    for cid in (BROKEN_ID, BLOB_ID):
        with pytest.raises(GitError, match="cannot be read") as err:
            restore_checkpoint(layout, cid)
        assert f"nexusd checkpoint drop {cid}" in (err.value.hint or "")
    for cid in (BROKEN_ID, BLOB_ID):
        drop(layout, find(layout, cid))
    assert scan(layout) == ([list_checkpoints(layout)[0]], [])
    assert git(repo, "for-each-ref", REF_PREFIX).count("\n") == 1


def test_the_message_of_a_checkpoint_is_no_trailer(repo: Path) -> None:
    layout = find_repo(repo)
    text = "Nexus-Cycle: 99\n\nNexus-Branch: evil\nNexus-State: merge"
    made = create_checkpoint(layout, reason="manual", message=text)
    (listed,) = list_checkpoints(layout)
    assert listed.cycle is None and made.cycle is None
    assert listed.branch == "main" and listed.state is None
    assert listed.subject == "Nexus-Cycle: 99"
    assert parse_trailers("Nexus-Cycle: 3") == {}  # a subject alone holds no trailers
    assert parse_trailers("s\n\nNexus-Cycle: 3\n") == {"Nexus-Cycle": "3"}


def test_restore_of_a_checkpoint_missing_a_file_changes_nothing(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "lost.txt").write_text("only in the checkpoint\n")
    (repo / "kept.txt").write_text("v1\n")
    cp = create_checkpoint(layout, reason="manual")
    _remove_object(repo, git(repo, "rev-parse", f"{cp.tree}:lost.txt").strip())
    (repo / "lost.txt").write_text("edited since\n")
    (repo / "kept.txt").write_text("v2\n")
    (repo / "new.txt").write_text("new\n")
    files, state = tree_files(repo), git_state(repo)

    for dry_run in (True, False):
        with pytest.raises(GitError, match=r"damaged.*'lost\.txt'.*nothing was changed") as err:
            restore_checkpoint(layout, cp.id, dry_run=dry_run)
        assert f"nexusd checkpoint drop {cp.id}" in (err.value.hint or "")
    assert tree_files(repo) == files
    assert git_state(repo) == state
    assert [c.id for c in list_checkpoints(layout)] == [cp.id]  # no pre-restore left behind

    # Its other files can still be restored by name.
    done = restore_checkpoint(layout, cp.id, paths=["kept.txt"])
    assert [c.path for c in done.changes] == ["kept.txt"]
    assert (repo / "kept.txt").read_text() == "v1\n"
    assert (repo / "lost.txt").read_text() == "edited since\n"


def test_identical_files_missing_one_blob_are_all_named(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "a.txt").write_text("same\n")
    (repo / "b.txt").write_text("same\n")
    cp = create_checkpoint(layout, reason="manual")
    _remove_object(repo, git(repo, "rev-parse", f"{cp.tree}:a.txt").strip())
    (repo / "a.txt").write_text("edited a\n")
    (repo / "b.txt").write_text("edited b\n")
    with pytest.raises(
        GitError, match=r"2 of its files are missing from git \('a\.txt', 'b\.txt'\)"
    ):
        restore_checkpoint(layout, cp.id)


def test_a_checkpoint_whose_tree_is_missing_is_listed_and_refused(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "a.txt").write_text("a\n")
    damaged = create_checkpoint(layout, reason="manual")
    (repo / "b.txt").write_text("b\n")
    fine = create_checkpoint(layout, reason="manual")
    _remove_object(repo, damaged.tree)

    rows = {r["id"]: r for r in overview(layout)}
    assert rows[damaged.id]["files_changed"] is None
    assert rows[fine.id]["files_changed"] == 2
    with pytest.raises(GitError, match=r"damaged.*nothing was changed"):
        restore_checkpoint(layout, damaged.id)
    assert [c.id for c in list_checkpoints(layout)] == [damaged.id, fine.id]


def test_a_restore_that_leaves_everything_alone_keeps_no_pre_restore(
    repo: Path, tmp_path: Path
) -> None:
    layout = find_repo(repo)
    (repo / "d").mkdir()
    (repo / "d" / "x").write_text("x\n")
    cp = create_checkpoint(layout, reason="manual")
    # `d` becomes an ignored link to a folder outside: the one change is skipped when the
    # restore is about to write, after its pre-restore checkpoint was taken.
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "d" / "x").unlink()
    (repo / "d").rmdir()
    (repo / "d").symlink_to(outside)
    (repo / ".git" / "info" / "exclude").write_text("d\n")

    result = restore_checkpoint(layout, cp.id)
    assert result.changes == ()
    assert [(c.path, c.action) for c in result.skipped] == [("d/x", "skip")]
    assert result.pre_restore is None
    assert [c.id for c in list_checkpoints(layout)] == [cp.id]
    assert list(outside.iterdir()) == []


def test_push_and_fetch_name_the_broken_ref_that_stops_git(repo: Path, tmp_path: Path) -> None:
    layout = find_repo(repo)
    create_checkpoint(layout, reason="manual")
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    git(repo, "remote", "add", "origin", str(tmp_path / "remote.git"))
    push(layout, "origin")  # a remote with checkpoints: a fetch has refs to negotiate
    (repo / ".git" / "refs" / "nexus" / "checkpoints" / BROKEN_ID).write_text(MISSING + "\n")
    made = create_checkpoint(layout, reason="manual")
    for transfer in (push, fetch):
        with pytest.raises(GitError, match=f"missing commit \\({BROKEN_ID}\\)") as err:
            transfer(layout, "origin")
        assert f"nexusd checkpoint drop {BROKEN_ID}" in (err.value.hint or "")
    drop(layout, find(layout, BROKEN_ID))
    push(layout, "origin")
    assert made.ref in git(tmp_path / "remote.git", "for-each-ref", REF_PREFIX)
