"""Restore: exact dry runs, path limits, refusals, and closest-id suggestions."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.checkpoint.listing import list_checkpoints
from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.errors import GitError, NexusError
from nexusd.paths import find_repo

from .gitutil import git, git_state


def test_dry_run_lists_exact_changes_and_changes_nothing(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "keep.txt").write_text("v1\n")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "keep.txt").write_text("v2\n")
    (repo / "README.md").unlink()
    (repo / "extra.txt").write_text("new\n")
    before = (repo / "keep.txt").read_text()
    result = restore_checkpoint(layout, cp.id, dry_run=True)
    assert [(c.action, c.path) for c in result.changes] == [
        ("add", "README.md"),
        ("delete", "extra.txt"),
        ("modify", "keep.txt"),
    ]
    assert result.pre_restore is None
    assert (repo / "keep.txt").read_text() == before
    assert (repo / "extra.txt").exists()


def test_paths_limit_the_restore(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "a.txt").write_text("a1\n")
    (repo / "b.txt").write_text("b1\n")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "a.txt").write_text("a2\n")
    (repo / "b.txt").write_text("b2\n")
    result = restore_checkpoint(layout, cp.id, paths=["a.txt"])
    assert [c.path for c in result.changes] == ["a.txt"]
    assert (repo / "a.txt").read_text() == "a1\n"
    assert (repo / "b.txt").read_text() == "b2\n"


def test_nothing_to_do_makes_no_pre_restore(repo: Path) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="manual")
    result = restore_checkpoint(layout, cp.id)
    assert result.changes == ()
    assert result.pre_restore is None


def test_unknown_id_lists_closest(repo: Path) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="manual")
    typo = cp.id[:-1] + ("0" if cp.id[-1] != "0" else "1")
    with pytest.raises(GitError) as info:
        restore_checkpoint(layout, typo)
    assert cp.id in str(info.value)
    assert "did you mean" in str(info.value)


def test_ignored_file_in_the_way_is_kept(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "cache.txt").write_text("snapshotted\n")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "cache.txt").write_text("now ignored and precious\n")
    (repo / ".gitignore").write_text("cache.txt\n")
    result = restore_checkpoint(layout, cp.id)
    assert (repo / "cache.txt").read_text() == "now ignored and precious\n"
    assert [c.path for c in result.skipped] == ["cache.txt"]
    assert not (repo / ".gitignore").exists()  # not in the snapshot: removed, kept in pre-restore


@pytest.mark.parametrize("dry_run", [True, False])
def test_an_untracked_file_grown_over_the_size_limit_is_kept(repo: Path, dry_run: bool) -> None:
    # Small when the checkpoint was made, over the limit now: no snapshot holds what it is
    # now (the pre-restore one leaves it out), so the restore must not overwrite it.
    layout = find_repo(repo)
    (repo / "data.bin").write_text("small\n")
    (repo / "note.txt").write_text("v1\n")
    cp = create_checkpoint(layout, reason="manual", max_untracked_bytes=1000)
    (repo / "data.bin").write_text("precious\n" * 700)
    (repo / "note.txt").write_text("v2\n")
    result = restore_checkpoint(layout, cp.id, dry_run=dry_run, max_untracked_bytes=1000)
    assert (repo / "data.bin").read_text() == "precious\n" * 700
    assert [c.path for c in result.changes] == ["note.txt"]
    assert [(c.path, c.why) for c in result.skipped] == [
        ("data.bin", "a file no checkpoint holds is there now (kept)")
    ]
    assert (repo / "note.txt").read_text() == ("v2\n" if dry_run else "v1\n")


def test_refuses_during_a_merge(repo: Path) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="manual")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    subprocess.run(["git", "merge", "other"], cwd=repo, capture_output=True, check=False)
    before = git_state(repo)
    with pytest.raises(GitError, match="merge is in progress"):
        restore_checkpoint(layout, cp.id)
    assert git_state(repo) == before


def test_file_becomes_directory_and_back(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "thing").write_text("a file\n")
    cp_file = create_checkpoint(layout, reason="manual")
    (repo / "thing").unlink()
    (repo / "thing").mkdir()
    (repo / "thing" / "inner.txt").write_text("inner\n")
    cp_dir = create_checkpoint(layout, reason="manual")
    restore_checkpoint(layout, cp_file.id)
    assert (repo / "thing").read_text() == "a file\n"
    restore_checkpoint(layout, cp_dir.id)
    assert (repo / "thing" / "inner.txt").read_text() == "inner\n"


@pytest.mark.parametrize("target", ["d", "elsewhere"])
def test_a_folder_replaced_by_a_link_is_restored(repo: Path, tmp_path: Path, target: str) -> None:
    # A link to itself (a loop) or out of the repository where the snapshot has a folder:
    # what lies behind the link is no file of the repository's at `d/a`.
    layout = find_repo(repo)
    (repo / "d").mkdir()
    (repo / "d" / "a").write_text("in the folder\n")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "d" / "a").unlink()
    (repo / "d").rmdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a").write_text("not the repository's\n")
    (repo / "d").symlink_to("d" if target == "d" else outside)
    dry = restore_checkpoint(layout, cp.id, dry_run=True)
    assert "d/a" in [c.path for c in dry.changes] and not dry.skipped
    restore_checkpoint(layout, cp.id)
    assert not (repo / "d").is_symlink() and (repo / "d" / "a").read_text() == "in the folder\n"
    assert (outside / "a").read_text() == "not the repository's\n"


def _nexus_files(repo: Path, version: str) -> None:
    (repo / ".scratchpad_logs").mkdir(exist_ok=True)
    (repo / ".scratchpad_logs" / "a_plan_request.md").write_text(f"goal {version}\n")
    (repo / ".scratchpad_logs" / "a_plan_response.md").write_text(f"answer {version}\n")
    (repo / "MEMORY.md").write_text(f"# Memory {version}\n")
    (repo / "memory" / "daily").mkdir(parents=True, exist_ok=True)
    (repo / "memory" / "daily" / f"{version}.md").write_text(f"note {version}\n")


def _nexus_state(repo: Path) -> dict[str, str]:
    folders = [repo / ".scratchpad_logs", repo / "memory" / "daily"]
    files = [p for f in folders for p in sorted(f.iterdir())] + [repo / "MEMORY.md"]
    return {p.relative_to(repo).as_posix(): p.read_text() for p in files}


def test_restore_leaves_nexus_files_as_they_are(repo: Path) -> None:
    layout = find_repo(repo)
    _nexus_files(repo, "v1")
    (repo / "app.py").write_text("v1\n")
    cp = create_checkpoint(layout, reason="manual")
    _nexus_files(repo, "v2")
    (repo / "app.py").write_text("v2\n")
    before = _nexus_state(repo)
    result = restore_checkpoint(layout, cp.id)
    assert (repo / "app.py").read_text() == "v1\n"
    # No old answer beside the newer request, no answer deleted, no memory rolled back.
    assert _nexus_state(repo) == before
    assert [c.path for c in result.changes] == ["app.py"]
    assert {c.path for c in result.skipped} == {
        ".scratchpad_logs/a_plan_request.md",
        ".scratchpad_logs/a_plan_response.md",
        "MEMORY.md",
        "memory/daily/v2.md",
    }
    dry = restore_checkpoint(layout, cp.id, dry_run=True)
    assert dry.changes == () and len(dry.skipped) == 4


def test_nexus_files_named_in_paths_are_restored(repo: Path) -> None:
    layout = find_repo(repo)
    _nexus_files(repo, "v1")
    cp = create_checkpoint(layout, reason="manual")
    _nexus_files(repo, "v2")
    result = restore_checkpoint(layout, cp.id, paths=[".scratchpad_logs", "MEMORY.md"])
    assert (repo / ".scratchpad_logs" / "a_plan_response.md").read_text() == "answer v1\n"
    assert (repo / "MEMORY.md").read_text() == "# Memory v1\n"
    assert (repo / "memory" / "daily" / "v2.md").exists()  # not named: kept
    assert result.pre_restore is not None
    # The whole tree named as `.` is not asking for nexusd's files.
    _nexus_files(repo, "v3")
    restore_checkpoint(layout, cp.id, paths=["."])
    assert (repo / "MEMORY.md").read_text() == "# Memory v3\n"


def test_paths_are_names_not_glob_patterns(repo: Path) -> None:
    layout = find_repo(repo)
    names = ["a[1].txt", "a1.txt", "star*.md", "starIMPORTANT.md"]
    for name in names:
        (repo / name).write_text("old\n")
    cp = create_checkpoint(layout, reason="manual")
    for name in names:
        (repo / name).write_text("new\n")
    result = restore_checkpoint(layout, cp.id, paths=["a[1].txt", "star*.md"])
    assert sorted(c.path for c in result.changes) == ["a[1].txt", "star*.md"]
    assert {n: (repo / n).read_text() for n in names} == {
        "a[1].txt": "old\n",
        "a1.txt": "new\n",
        "star*.md": "old\n",
        "starIMPORTANT.md": "new\n",
    }


@pytest.mark.parametrize("kind", ["nested", "submodule"])
def test_a_nested_repository_is_reported_not_deleted(
    repo: Path, make_repo: Callable[..., Path], kind: str
) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="manual")
    if kind == "nested":
        sub = make_repo("repo/sub")
    else:
        source = make_repo("subsrc")
        git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
        sub = repo / "sub"
    for dry_run in (True, False):
        result = restore_checkpoint(layout, cp.id, dry_run=dry_run)
        assert "sub" not in [c.path for c in result.changes]
        assert ("sub", "a submodule / nested repository") in [
            (c.path, c.why) for c in result.skipped
        ]
    assert (sub / "README.md").read_text() == "# demo\n"


def test_a_path_in_neither_tree_is_refused_before_any_snapshot(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "a.txt").write_text("a\n")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "a.txt").write_text("b\n")
    for bad, why in [("nope.txt", "nor in the working tree"), ("../x", "outside the repository")]:
        with pytest.raises(NexusError, match=why):
            restore_checkpoint(layout, cp.id, paths=["a.txt", bad])
    # No stray pre-restore checkpoint, nothing written.
    assert [c.id for c in list_checkpoints(layout)] == [cp.id]
    assert (repo / "a.txt").read_text() == "b\n"
    # A path only in the checkpoint, or only on disk, is fine.
    (repo / "a.txt").unlink()
    (repo / "only-now.txt").write_text("new\n")
    result = restore_checkpoint(layout, cp.id, paths=["a.txt", "only-now.txt"])
    assert sorted(c.path for c in result.changes) == ["a.txt", "only-now.txt"]


def test_a_second_restore_at_once_is_refused_before_it_snapshots(repo: Path) -> None:
    import fcntl
    import os

    layout = find_repo(repo)
    (repo / "a.txt").write_text("a\n")
    cp = create_checkpoint(layout, reason="manual")
    (repo / "a.txt").write_text("b\n")
    layout.nexus_dir.mkdir(parents=True, exist_ok=True)
    # Another process's restore holds the working tree's restore lock.
    fd = os.open(layout.nexus_dir / "restore.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(NexusError, match="another restore is running"):
            restore_checkpoint(layout, cp.id)
        # A dry run writes nothing: it may look while the other restore runs.
        preview = restore_checkpoint(layout, cp.id, dry_run=True)
        assert [c.path for c in preview.changes] == ["a.txt"]
    finally:
        os.close(fd)
    assert [c.id for c in list_checkpoints(layout)] == [cp.id]
    assert (repo / "a.txt").read_text() == "b\n"
    assert restore_checkpoint(layout, cp.id).changes  # once it is done, this one runs
    assert (repo / "a.txt").read_text() == "a\n"
