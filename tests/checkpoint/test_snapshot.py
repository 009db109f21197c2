"""Snapshots: the whole working tree, nothing else touched, edge cases of real repositories."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.checkpoint.listing import list_checkpoints
from nexusd.checkpoint.model import REF_PREFIX, parse_trailers
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.errors import GitError
from nexusd.paths import find_repo

from .gitutil import git, git_state


def _files_in(root: Path, commit: str) -> dict[str, str]:
    """path -> mode of every entry in a commit's tree."""
    out = git(root, "ls-tree", "-r", "-z", commit)
    entries = {}
    for item in out.split("\0"):
        if item:
            meta, path = item.split("\t", 1)
            entries[path] = meta.split()[0]
    return entries


def test_snapshot_holds_staged_unstaged_and_untracked_but_not_ignored(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore")
    (repo / "README.md").write_text("changed, unstaged\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "new dir").mkdir()
    (repo / "new dir" / "untracked file.txt").write_text("untracked\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\0" * 10)
    before = git_state(repo)

    cp = create_checkpoint(find_repo(repo), reason="manual", trailers={"cycle": "7"})

    files = _files_in(repo, cp.commit)
    assert set(files) == {".gitignore", "README.md", "staged.txt", "new dir/untracked file.txt"}
    assert git(repo, "show", f"{cp.commit}:README.md") == "changed, unstaged\n"
    assert git_state(repo) == before
    assert git(repo, "rev-parse", cp.ref).strip() == cp.commit
    assert git(repo, "rev-parse", f"{cp.commit}^").strip() == before["head_sha"].strip()
    trailers = parse_trailers(git(repo, "log", "-1", "--format=%B", cp.commit))
    assert trailers["Nexus-Reason"] == "manual"
    assert trailers["Nexus-Cycle"] == "7"
    assert trailers["Nexus-Branch"] == "main"
    assert trailers["Nexus-Head"] == before["head_sha"].strip()
    assert cp.restore_command == f"nexusd checkpoint restore {cp.id}"
    assert cp.ref == REF_PREFIX + cp.id
    # The commit object and ref nexusd writes itself are exactly what git would write.
    git(repo, "fsck", "--strict", "--no-dangling")
    raw = subprocess.run(
        ["git", "cat-file", "commit", cp.commit], cwd=repo, capture_output=True, check=True
    ).stdout
    assert git(repo, "hash-object", "-t", "commit", "--stdin", input=raw).strip() == cp.commit
    assert git(repo, "for-each-ref", "--format=%(objectname)", cp.ref).strip() == cp.commit


@pytest.mark.parametrize("packed", [False, True])
def test_head_read_from_loose_or_packed_refs(repo: Path, packed: bool) -> None:
    if packed:
        git(repo, "pack-refs", "--all")
    head = git(repo, "rev-parse", "HEAD").strip()
    cp = create_checkpoint(find_repo(repo), reason="manual")
    assert cp.parent == head
    assert git(repo, "rev-parse", f"{cp.commit}^").strip() == head


def test_sha256_repository_falls_back_to_git(make_repo: Callable[..., Path]) -> None:
    root = make_repo("sha256", commit=False)
    git(root, "init", "-q", "--object-format=sha256", str(root / "r"))
    r = root / "r"
    (r / "a").write_text("a")
    git(r, "add", "a")
    git(r, "commit", "-qm", "a")
    cp = create_checkpoint(find_repo(r), reason="manual")
    assert len(cp.commit) == 64
    assert git(r, "rev-parse", f"{cp.commit}^").strip() == git(r, "rev-parse", "HEAD").strip()


def test_modes_symlinks_binary_and_weird_names(repo: Path) -> None:
    script = repo / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    os.symlink("README.md", repo / "link")
    blob = bytes(range(256)) * 4096
    (repo / "data.bin").write_bytes(blob)
    weird = ["sp ace.txt", "ünïcödé.md", "new\nline.txt", "tab\there", '"quoted"']
    for name in weird:
        (repo / name).write_text(name)

    cp = create_checkpoint(find_repo(repo), reason="manual")

    files = _files_in(repo, cp.commit)
    assert files["run.sh"] == "100755"
    assert files["link"] == "120000"
    assert files["data.bin"] == "100644"
    assert set(weird) <= set(files)
    out = subprocess.run(
        ["git", "cat-file", "blob", f"{cp.commit}:data.bin"],
        cwd=repo,
        capture_output=True,
        check=False,
    ).stdout
    assert out == blob


def test_unborn_branch_has_no_parent(make_repo: Callable[..., Path]) -> None:
    root = make_repo("unborn", commit=False)
    (root / "a.txt").write_text("first\n")
    cp = create_checkpoint(find_repo(root), reason="manual")
    assert cp.parent is None
    assert git(root, "rev-list", "--parents", "-n1", cp.commit).split() == [cp.commit]
    assert cp.trailers["Nexus-Head"] == "(unborn)"
    assert not (root / ".git" / "index").exists()


def test_detached_head(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach")
    cp = create_checkpoint(find_repo(repo), reason="manual")
    assert cp.branch is None
    assert cp.trailers["Nexus-Branch"] == "(detached)"
    assert cp.parent == head


def test_linked_worktree_snapshots_its_own_tree(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "only-in-worktree.txt").write_text("wt\n")
    (repo / "only-in-main.txt").write_text("main\n")
    layout = find_repo(wt)
    cp = create_checkpoint(layout, reason="manual")
    files = _files_in(repo, cp.commit)
    assert "only-in-worktree.txt" in files
    assert "only-in-main.txt" not in files
    assert cp.branch == "side"
    # The ref lives in the shared repository: visible from the main worktree too.
    assert [c.id for c in list_checkpoints(find_repo(repo))] == [cp.id]


def test_submodule_is_recorded_as_gitlink(repo: Path, make_repo: Callable[..., Path]) -> None:
    sub = make_repo("subsrc")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor/sub")
    git(repo, "commit", "-qm", "add submodule")
    (repo / "vendor" / "sub" / "dirty.txt").write_text("inside the submodule\n")
    cp = create_checkpoint(find_repo(repo), reason="manual")
    files = _files_in(repo, cp.commit)
    assert files["vendor/sub"] == "160000"
    assert not any(p.startswith("vendor/sub/") for p in files)


@pytest.mark.parametrize(
    ("command", "state"),
    [
        (["merge", "other"], "merge"),
        (["rebase", "other"], "rebase"),
        (["cherry-pick", "other"], "cherry-pick"),
    ],
)
def test_conflicted_operation_in_progress_is_flagged(
    repo: Path, command: list[str], state: str
) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    proc = subprocess.run(["git", *command], cwd=repo, capture_output=True, check=False)
    assert proc.returncode != 0  # a conflict: unmerged entries in the index
    before = git_state(repo)
    cp = create_checkpoint(find_repo(repo), reason="manual")
    assert cp.state == state
    assert "<<<<<<<" in git(repo, "show", f"{cp.commit}:README.md")
    assert git_state(repo) == before


def test_works_while_another_git_holds_index_lock(repo: Path) -> None:
    (repo / "README.md").write_text("edited while locked\n")
    lock = repo / ".git" / "index.lock"
    lock.write_text("held by another git process")
    try:
        cp = create_checkpoint(find_repo(repo), reason="manual")
        assert lock.read_text() == "held by another git process"
    finally:
        lock.unlink()
    assert git(repo, "show", f"{cp.commit}:README.md") == "edited while locked\n"


def test_concurrent_commits_and_checkpoints(repo: Path) -> None:
    layout = find_repo(repo)
    errors: list[BaseException] = []

    def commit_loop() -> None:
        try:
            for i in range(5):
                (repo / f"c{i}.txt").write_text(str(i))
                git(repo, "add", f"c{i}.txt")
                git(repo, "commit", "-qm", f"c{i}")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    thread = threading.Thread(target=commit_loop)
    thread.start()
    made = [create_checkpoint(layout, reason="request") for _ in range(5)]
    thread.join()
    assert not errors
    assert len({c.id for c in made}) == 5
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "6"
    assert git(repo, "status", "--porcelain") == ""
    assert [c.id for c in list_checkpoints(layout)] == sorted(c.id for c in made)


def test_unknown_reason_is_refused(repo: Path) -> None:
    with pytest.raises(GitError, match="reason"):
        create_checkpoint(find_repo(repo), reason="whim")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x08"])
def test_a_message_with_a_control_character_is_refused(repo: Path, char: str) -> None:
    layout = find_repo(repo)
    with pytest.raises(GitError, match="control character"):
        create_checkpoint(layout, reason="manual", message=f"fix{char}it")
    assert list_checkpoints(layout) == []
    kept = create_checkpoint(layout, reason="manual", message="tabs\tand\nnewlines are fine")
    assert [c.id for c in list_checkpoints(layout)] == [kept.id]


def test_no_temporary_files_left(repo: Path) -> None:
    layout = find_repo(repo)
    create_checkpoint(layout, reason="manual")
    assert list((layout.nexus_dir / "tmp").iterdir()) == []


def test_oversized_untracked_files_stay_out_and_are_never_restored_away(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "dataset.bin").write_bytes(b"x" * 5000)
    (repo / "small.txt").write_text("small\n")
    (repo / "README.md").write_bytes(b"y" * 6000)  # tracked: always snapshotted, any size
    cp = create_checkpoint(layout, reason="manual", max_untracked_bytes=4096)
    files = _files_in(repo, cp.commit)
    assert "dataset.bin" not in files
    assert {"small.txt", "README.md"} <= set(files)
    assert cp.trailers["Nexus-Skipped"] == "1 untracked file(s) over 4096 bytes"
    (repo / "small.txt").unlink()
    from nexusd.checkpoint.restore import restore_checkpoint

    restore_checkpoint(layout, cp.id, max_untracked_bytes=4096)
    assert (repo / "dataset.bin").read_bytes() == b"x" * 5000
    assert (repo / "small.txt").read_text() == "small\n"
    whole = create_checkpoint(layout, reason="manual", max_untracked_bytes=0)
    assert "dataset.bin" in _files_in(repo, whole.commit)


def test_stat_cache_of_the_real_index_is_reused(repo: Path) -> None:
    """Unchanged-looking files are not re-hashed: proof by a change git cannot see by stat."""
    git(repo, "config", "core.trustctime", "false")
    tracked = repo / "stable.txt"
    tracked.write_text("aaaa\n")
    old = 1_600_000_000_000_000_000
    os.utime(tracked, ns=(old, old))
    git(repo, "add", "stable.txt")
    git(repo, "commit", "-qm", "stable")
    with tracked.open("r+") as fh:  # same inode, same size, mtime put back
        fh.write("bbbb\n")
    os.utime(tracked, ns=(old, old))
    cp = create_checkpoint(find_repo(repo), reason="manual")
    # git (and so the snapshot) trusts the cached stat data instead of reading the file again.
    assert git(repo, "show", f"{cp.commit}:stable.txt") == "aaaa\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_file_deleted_mid_snapshot_is_left_out(repo: Path) -> None:
    # A clean filter on a.txt deletes b.txt after `git add` listed it and before it reads
    # it: the "unable to stat" a temp file that comes and goes causes, every time.
    git(repo, "config", "filter.vanish.clean", "rm -f b.txt; cat")
    (repo / ".gitattributes").write_text("a.txt filter=vanish\n")
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    cp = create_checkpoint(find_repo(repo), reason="manual")
    files = _files_in(repo, cp.commit)
    assert "a.txt" in files and "b.txt" not in files
    assert not (repo / "b.txt").exists()
    assert cp.trailers["Nexus-Vanished"] == "1 file(s) deleted while the snapshot was taken"


def test_a_tracked_file_deleted_mid_snapshot_is_left_out_too(repo: Path) -> None:
    # Both tracked and edited: `git add` lists them as modified, then a.txt's clean filter
    # deletes b.txt before it is read. The snapshot's index starts from the real one, whose
    # entry for b.txt must not survive into the checkpoint (a restore would bring it back).
    (repo / ".gitattributes").write_text("a.txt filter=vanish\n")
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a and b")
    git(repo, "config", "filter.vanish.clean", "rm -f b.txt; cat")
    (repo / "a.txt").write_text("a, edited\n")
    (repo / "b.txt").write_text("b, edited and longer\n")
    cp = create_checkpoint(find_repo(repo), reason="manual")
    files = _files_in(repo, cp.commit)
    assert "a.txt" in files and "b.txt" not in files
    assert cp.trailers["Nexus-Vanished"] == "1 file(s) deleted while the snapshot was taken"
    assert "b.txt" in git(repo, "ls-files")  # the real index is untouched


def test_other_git_add_failures_still_raise(repo: Path) -> None:
    git(repo, "config", "filter.broken.clean", "exit 3")
    git(repo, "config", "filter.broken.required", "true")
    (repo / ".gitattributes").write_text("a.txt filter=broken\n")
    (repo / "a.txt").write_text("a\n")
    # The message names the git command that failed, not just the `-c` options before it.
    with pytest.raises(GitError, match="`git add -A"):
        create_checkpoint(find_repo(repo), reason="manual")


def test_a_nested_repository_with_no_commit_is_left_out_and_named(
    repo: Path, make_repo: Callable[..., Path]
) -> None:
    make_repo("repo/fresh", commit=False)
    (repo / "fresh" / "wip.txt").write_text("not committed in the nested repository\n")
    (repo / "big.bin").write_bytes(b"x" * 200)
    (repo / "small.txt").write_text("small\n")
    cp = create_checkpoint(find_repo(repo), reason="manual", max_untracked_bytes=100)
    files = _files_in(repo, cp.commit)
    assert "small.txt" in files
    assert not any(p == "fresh" or p.startswith("fresh/") for p in files)
    assert cp.left_out == (
        ("big.bin", "untracked, over 100 bytes"),
        ("fresh", "a nested repository with no commit"),
    )
    assert cp.trailers["Nexus-Skipped-Repos"] == "1 nested repository(ies) with no commit"
    assert cp.left_out_notes == [
        "1 untracked file(s) over 100 bytes",
        "1 nested repository(ies) with no commit",
    ]


def test_a_group_shared_repository_stays_writable_by_the_group(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo("shared", commit=False)
    git(root, "init", "-q", "--shared=group", str(root / "r"))
    r = root / "r"
    (r / "a").write_text("a")
    git(r, "add", "a")
    git(r, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    old = os.umask(0o022)
    try:
        cp = create_checkpoint(find_repo(r), reason="manual")
    finally:
        os.umask(old)
    made = [r / ".git" / "objects" / cp.commit[:2], r / ".git" / "refs" / "nexus" / "checkpoints"]
    for path in [*made, r / ".git" / cp.ref]:
        assert path.stat().st_mode & 0o060 == 0o060, path  # group may read and write
