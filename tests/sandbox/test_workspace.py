"""Snapshots: the working tree is exported without touching the index or the files."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.checkpoint.snapshot import snapshot_tree
from nexusd.errors import GitError
from nexusd.paths import find_repo
from nexusd.sandbox import subprocess_backend
from nexusd.sandbox.spec import CheckSpec
from nexusd.sandbox.workspace import (
    archive,
    extract,
    resolve_snapshot,
    resolve_tree,
    retag,
    scratch_dir,
    sweep_workspaces,
)
from tests.conftest import git


def _names(tar_bytes: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        return {m.name for m in tar.getmembers() if m.isfile()}


def test_snapshot_includes_untracked_and_changes_but_not_ignored(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "new.py").write_text("print(1)\n")
    (repo / "debug.log").write_text("noise\n")
    (repo / "README.md").write_text("# changed\n")
    git(repo, "add", "README.md")
    index_before = (repo / ".git" / "index").read_bytes()
    status_before = git(repo, "status", "--porcelain")
    layout = find_repo(repo)
    tree = snapshot_tree(layout)
    assert (repo / ".git" / "index").read_bytes() == index_before
    assert git(repo, "status", "--porcelain") == status_before
    names = _names(archive(layout, tree))
    assert names == {".gitignore", "new.py", "README.md"}
    out = repo.parent / "out"
    extract(archive(layout, tree), out)
    assert (out / "README.md").read_text() == "# changed\n"


def test_links_leading_out_of_the_workspace_are_kept_as_links(repo: Path) -> None:
    # A repository may commit a link to a system file or to a sibling checkout: the check
    # sees the link as the snapshot has it (docker's copy always did); they used to be
    # dropped, so a check that tests for the link failed on bwrap and subprocess only.
    (repo / "abs_link").symlink_to("/etc/hostname")
    (repo / "up_link").symlink_to("../../outside")
    (repo / "ok_link").symlink_to("README.md")
    layout = find_repo(repo)
    out = repo.parent / "linked"
    assert extract(archive(layout, snapshot_tree(layout)), out) == []
    assert os.readlink(out / "abs_link") == "/etc/hostname"
    assert os.readlink(out / "up_link") == "../../outside"
    assert (out / "ok_link").read_text() == "# demo\n"


def test_nothing_is_unpacked_through_a_link(tmp_path: Path) -> None:
    # A crafted tree (git would not make one) with a link, then a file under the link.
    target = tmp_path / "target"
    target.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        link = tarfile.TarInfo("out")
        link.type, link.linkname = tarfile.SYMTYPE, str(target)
        tar.addfile(link)
        data = b"pwned\n"
        member = tarfile.TarInfo("out/evil.txt")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
        same = tarfile.TarInfo("out")
        same.size = len(data)
        tar.addfile(same, io.BytesIO(data))
    refused = extract(buf.getvalue(), tmp_path / "ws")
    assert refused == ["out/evil.txt", "out"]
    assert list(target.iterdir()) == []


def test_resolve_tree_of_a_commit_ignores_later_edits(repo: Path) -> None:
    layout = find_repo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("# edited later\n")
    out = repo.parent / "at-head"
    extract(archive(layout, resolve_tree(layout, head)), out)
    assert (out / "README.md").read_text() == "# demo\n"
    assert resolve_tree(layout, None) != resolve_tree(layout, head)


def test_retag_puts_everything_under_the_prefix_owned_by_the_sandbox_user(repo: Path) -> None:
    layout = find_repo(repo)
    tagged = retag(archive(layout, resolve_tree(layout, "HEAD")), prefix="workspace", owner=65534)
    with tarfile.open(fileobj=io.BytesIO(tagged)) as tar:
        members = tar.getmembers()
    assert members[0].name == "workspace" and members[0].isdir()
    assert {m.name for m in members} == {"workspace", "workspace/README.md"}
    assert {(m.uid, m.gid) for m in members} == {(65534, 65534)}


def test_unknown_snapshot_is_a_git_error_with_a_hint(repo: Path) -> None:
    with pytest.raises(GitError, match="'deadbeef' is not a commit or tree") as info:
        resolve_tree(find_repo(repo), "deadbeef")
    assert "checkpoint" in (info.value.hint or "")


def test_workspaces_go_to_memory_when_it_is_a_tmpfs_with_room() -> None:
    mounts = Path("/proc/self/mounts").read_text(encoding="utf-8").split("\n")
    shm_is_tmpfs = any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in mounts if line)
    assert scratch_dir(10_000) == ("/dev/shm" if shm_is_tmpfs else None)
    # A tree that would not fit (four times over) goes to the disk's temporary folder.
    assert scratch_dir(1 << 60) is None


def test_a_check_runs_in_the_scratch_folder(make_spec: Callable[..., CheckSpec]) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w"):
        pass
    result = subprocess_backend.run(make_spec("pwd -P"), out.getvalue())
    assert result.status == "passed", result.stderr
    folder = scratch_dir(len(out.getvalue())) or tempfile.gettempdir()
    assert result.stdout.strip().startswith(str(Path(folder).resolve()) + "/nexusd-run-")
    assert not Path(result.stdout.strip()).exists()  # removed after the check


def test_workspaces_a_killed_nexusd_left_are_swept(tmp_path: Path) -> None:
    # A nexusd killed mid-check cannot remove its workspace; in /dev/shm that is memory
    # kept until reboot (130 of them were found on one machine).
    ns = Path("/proc/self/ns/pid").stat().st_ino
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = tmp_path / f"nexusd-run-{ns}-{gone.pid}-abc123"
    live = tmp_path / f"nexusd-bwrap-{ns}-{os.getpid()}-def456"
    elsewhere = tmp_path / f"nexusd-run-{ns + 1}-{gone.pid}-ghi789"  # another pid namespace
    other = tmp_path / "nexusd-run-notours"
    for folder in (dead, live, elsewhere, other):
        (folder / "workspace" / "pkg").mkdir(parents=True)
        (folder / "workspace" / "pkg" / "m.py").write_text("x = 1\n")
    assert sweep_workspaces(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and elsewhere.exists() and other.exists()


def test_a_workspace_is_named_by_its_process(make_spec: Callable[..., CheckSpec]) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w"):
        pass
    result = subprocess_backend.run(make_spec("pwd -P"), out.getvalue())
    ns = Path("/proc/self/ns/pid").stat().st_ino
    assert Path(result.stdout.strip()).parent.name.startswith(f"nexusd-run-{ns}-{os.getpid()}-")


def test_the_workspace_holds_the_bytes_of_converted_files(repo: Path) -> None:
    # Line endings, `ident` and `working-tree-encoding`: the exported tree is converted by
    # `git archive` as a checkout would, so the workspace must match the disk exactly.
    (repo / ".gitattributes").write_bytes(
        b"id.txt ident\n*.u16 working-tree-encoding=UTF-16LE\n*.bat text eol=crlf\n"
    )
    files = {
        "id.txt": b"$Id$\nhello\n",
        "w.u16": "hi\nthere\n".encode("utf-16-le"),
        "s.bat": b"one\r\ntwo\r\n",
    }
    for name, data in files.items():
        (repo / name).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "converted")
    for name in files:
        (repo / name).unlink()
    git(repo, "checkout", "--", ".")
    (repo / "new.u16").write_bytes("untracked\n".encode("utf-16-le"))
    layout = find_repo(repo)
    out = repo.parent / "ws"
    tree, _left_out = resolve_snapshot(layout, None)
    extract(archive(layout, tree), out)
    for name in (*files, "new.u16"):
        assert (out / name).read_bytes() == (repo / name).read_bytes(), name
    other = repo.parent / "ws2"
    extract(archive(layout, resolve_tree(layout, None)), other)
    assert (other / "id.txt").read_bytes() == (repo / "id.txt").read_bytes()
    assert (other / "w.u16").read_bytes() == (repo / "w.u16").read_bytes()
