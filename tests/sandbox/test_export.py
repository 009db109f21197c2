"""The tar a check's workspace is unpacked from holds every path of the snapshot's tree."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.config import config_from_mapping
from nexusd.paths import find_repo
from nexusd.sandbox.export import stored_as_is, tree_tar
from nexusd.sandbox.runner import run_checks
from nexusd.sandbox.workspace import archive, extract, resolve_snapshot, resolve_tree
from tests.conftest import git


def _members(tar_bytes: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        return {m.name: m for m in tar.getmembers()}


def _git_archive(repo: Path, tree: str) -> set[str]:
    out = subprocess.run(
        ["git", "archive", "--format=tar", tree], cwd=repo, capture_output=True, check=True
    ).stdout
    return set(_members(out))


@pytest.fixture
def ignored(repo: Path) -> Path:
    """A repository whose tests, a script and a link are `export-ignore` (kept out of its
    release tarballs), one of them converted by `eol=crlf`."""
    (repo / ".gitattributes").write_bytes(
        b"tests/ export-ignore\ntools/run.sh export-ignore\n*.bat text eol=crlf\n"
    )
    (repo / "tests" / "deep").mkdir(parents=True)
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    (repo / "tests" / "deep" / "win.bat").write_bytes(b"one\r\ntwo\r\n")
    (repo / "tests" / "link").symlink_to("test_a.py")
    (repo / "tools").mkdir()
    (repo / "tools" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (repo / "tools" / "run.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests kept out of release tarballs")
    return repo


IGNORED = ("tests/test_a.py", "tests/deep/win.bat", "tests/link", "tools/run.sh")


@pytest.mark.parametrize("snapshot", ["working tree", "commit"])
def test_export_ignore_paths_are_in_the_workspace(ignored: Path, snapshot: str) -> None:
    layout = find_repo(ignored)
    (ignored / "tests" / "test_new.py").write_text("def test_b():\n    assert True\n")
    tree = (
        resolve_snapshot(layout, None)[0]
        if snapshot == "working tree"
        else resolve_tree(layout, "HEAD")
    )
    # What `git archive` alone gives: the release tarball's paths, without the tests.
    assert not any(name.startswith("tests") for name in _git_archive(ignored, tree))
    members = _members(archive(layout, tree))
    assert set(IGNORED) <= set(members)
    assert ("tests/test_new.py" in members) == (snapshot == "working tree")
    # Folders are entries of their own (docker would make missing ones root's).
    assert members["tests"].isdir() and members["tests/deep"].isdir()
    assert members["tests/link"].issym() and members["tests/link"].linkname == "test_a.py"
    assert members["tools/run.sh"].mode & 0o111
    out = ignored.parent / "ws"
    extract(archive(layout, tree), out)
    for name in ("tests/test_a.py", "tests/deep/win.bat", "tools/run.sh"):
        # Converted as a checkout converts them: `eol=crlf` gives CRLF.
        assert (out / name).read_bytes() == (ignored / name).read_bytes(), name
    assert (out / "tests" / "link").readlink() == Path("test_a.py")


def test_a_check_runs_the_tests_a_release_tarball_leaves_out(ignored: Path, backend: str) -> None:
    # Writing into the added folder: it belongs to the sandbox's user, as the others do.
    checks = [{"name": "tests", "run": "ls tests && sh tools/run.sh && touch tests/deep/w"}]
    config = config_from_mapping({"sandbox": {"backend": backend}, "checks": checks})
    (result,) = run_checks(find_repo(ignored), config)
    assert result.status == "passed", result.stderr
    assert "test_a.py" in result.stdout and "ran" in result.stdout


def test_a_tree_without_export_ignore_is_exported_by_git_archive_alone(repo: Path) -> None:
    layout = find_repo(repo)
    tree = resolve_tree(layout, "HEAD")
    expected = subprocess.run(
        ["git", "archive", "--format=tar", tree], cwd=repo, capture_output=True, check=True
    ).stdout
    assert tree_tar(layout, tree) == expected


@pytest.fixture
def converted(repo: Path) -> Path:
    """A repository whose files git converts on checkout (`ident`, UTF-16, CRLF), as a clone
    writes them."""
    (repo / ".gitattributes").write_bytes(
        b"*.txt ident\n*.u16 working-tree-encoding=UTF-16LE\n*.bat text eol=crlf\n"
    )
    (repo / "id.txt").write_bytes(b"$Id$\nhello\n")
    (repo / "w.u16").write_bytes("hi\nthere\n".encode("utf-16-le"))
    (repo / "s.bat").write_bytes(b"one\r\ntwo\r\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "converted")
    for name in ("id.txt", "w.u16", "s.bat"):
        (repo / name).unlink()
    git(repo, "checkout", "--", ".")
    return repo


CONVERTED = ("id.txt", "w.u16", "s.bat")


def test_an_as_is_checkpoint_is_exported_as_stored(converted: Path) -> None:
    layout = find_repo(converted)
    checkpoint = create_checkpoint(layout, reason="manual")
    assert checkpoint.as_is
    assert stored_as_is(layout, checkpoint.commit)
    assert not stored_as_is(layout, "HEAD") and not stored_as_is(layout, "HEAD^{tree}")
    tree = resolve_tree(layout, checkpoint.commit)
    out = converted.parent / "ws"
    extract(archive(layout, tree, as_is=True), out)
    for name in CONVERTED:
        assert (out / name).read_bytes() == (converted / name).read_bytes(), name
    # Converted a second time, as before: another `$Id`, UTF-16 of UTF-16.
    twice = converted.parent / "twice"
    extract(archive(layout, tree), twice)
    assert (twice / "w.u16").read_bytes() != (converted / "w.u16").read_bytes()


def test_a_check_of_an_as_is_checkpoint_sees_the_bytes_it_saved(converted: Path) -> None:
    layout = find_repo(converted)
    checkpoint = create_checkpoint(layout, reason="manual")
    for name in CONVERTED:  # the checkpoint, not the working tree, is what runs
        (converted / name).write_bytes(b"changed later\n")
    checks = [{"name": "bytes", "run": "od -An -c " + " ".join(CONVERTED)}]
    config = config_from_mapping({"sandbox": {"backend": "subprocess"}, "checks": checks})
    (result,) = run_checks(layout, config, treeish=checkpoint.commit)
    git(converted, "checkout", "--", ".")  # the committed files, as a clone writes them
    expected = subprocess.run(
        ["od", "-An", "-c", *CONVERTED], cwd=converted, capture_output=True, check=True
    ).stdout.decode()
    assert result.status == "passed", result.stderr
    assert result.stdout == expected


def test_a_path_with_a_newline_is_exported(repo: Path) -> None:
    (repo / ".gitattributes").write_bytes(b"odd* export-ignore\n")
    (repo / "odd\nname.txt").write_bytes(b"x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "odd")
    layout = find_repo(repo)
    members = _members(archive(layout, resolve_tree(layout, "HEAD")))
    assert "odd\nname.txt" in members


@pytest.mark.parametrize("where", ["info/attributes", "core.attributesFile"])
def test_export_ignore_outside_the_tree_is_seen_too(repo: Path, where: str) -> None:
    # `git archive` also reads the repository's info/attributes and the user's attributes
    # file: a tree with no .gitattributes can still lose paths.
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests")
    if where == "info/attributes":
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_bytes(b"tests/ export-ignore\n")
    else:
        attributes = repo.parent / "attributes"
        attributes.write_bytes(b"tests/ export-ignore\n")
        git(repo, "config", "core.attributesFile", str(attributes))
    layout = find_repo(repo)
    tree = resolve_tree(layout, "HEAD")
    assert "tests/test_a.py" not in _git_archive(repo, tree)
    assert "tests/test_a.py" in _members(archive(layout, tree))


def test_export_ignored_files_are_converted_by_the_trees_attributes(repo: Path) -> None:
    (repo / ".gitattributes").write_bytes(b"tests/ export-ignore\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "a.txt").write_bytes(b"one\ntwo\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    # Uncommitted edits of attribute files are not the commit's: a clone writes LF.
    (repo / ".gitattributes").write_bytes(b"tests/ export-ignore\n*.txt text eol=crlf\n")
    (repo / "tests" / ".gitattributes").write_bytes(b"* text eol=crlf\n")
    layout = find_repo(repo)
    out = repo.parent / "ws"
    extract(archive(layout, resolve_tree(layout, "HEAD")), out)
    assert (out / "tests" / "a.txt").read_bytes() == b"one\ntwo\n"


def test_an_as_is_checkpoint_smudges_the_files_a_filter_driver_owns(repo: Path) -> None:
    git(repo, "config", "filter.up.smudge", "tr a-z A-Z")
    git(repo, "config", "filter.up.clean", "tr A-Z a-z")
    (repo / ".gitattributes").write_bytes(b"*.flt filter=up\n")
    (repo / "f.flt").write_bytes(b"UPPER\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    layout = find_repo(repo)
    checkpoint = create_checkpoint(layout, reason="manual")
    assert checkpoint.as_is
    out = repo.parent / "ws"
    extract(archive(layout, resolve_tree(layout, checkpoint.commit), as_is=True), out)
    # As on disk and as a restore writes it (Git LFS: the file, not its pointer).
    assert (out / "f.flt").read_bytes() == b"UPPER\n"


def test_an_empty_filter_attribute_does_not_hide_the_next_files_driver(repo: Path) -> None:
    # `filter=` prints an empty value: the attribute triples after it must not shift.
    git(repo, "config", "filter.up.smudge", "tr a-z A-Z")
    git(repo, "config", "filter.up.clean", "tr A-Z a-z")
    (repo / ".gitattributes").write_bytes(b"a.txt filter=\nb.flt filter=up\nc.txt filter=\n")
    for name in ("a.txt", "b.flt", "c.txt"):
        (repo / name).write_bytes(b"UPPER\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    layout = find_repo(repo)
    checkpoint = create_checkpoint(layout, reason="manual")
    out = repo.parent / "ws"
    extract(archive(layout, resolve_tree(layout, checkpoint.commit), as_is=True), out)
    for name in ("a.txt", "b.flt", "c.txt"):
        assert (out / name).read_bytes() == (repo / name).read_bytes(), name
