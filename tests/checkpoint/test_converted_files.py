"""Files git converts: what older checkpoints, snapshots, listings and restores do with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.checkpoint.model import REF_PREFIX
from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import build_tree_report, create_checkpoint
from nexusd.cli import cli
from nexusd.paths import find_repo

from .gitutil import commit_files, git

CRLF = b"one\r\ntwo\r\n"


def _old_checkpoint(repo: Path, cid: str) -> None:
    """A checkpoint as nexusd made it before `Nexus-Bytes`: git's cleaned tree of the
    working tree, untracked files included, and no `Nexus-Bytes` trailer."""
    index = repo / ".git" / "old-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    for args in (["read-tree", "HEAD"], ["-c", "core.safecrlf=false", "add", "-A"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    index.unlink()
    message = f"old checkpoint\n\nNexus-Reason: manual\nNexus-Id: {cid}\n"
    commit = git(repo, "commit-tree", tree, "-p", "HEAD", input=message.encode()).strip()
    git(repo, "update-ref", REF_PREFIX + cid, commit)


def test_an_older_checkpoint_restores_only_the_files_that_changed(repo: Path) -> None:
    # Compared with the disk's bytes, every file whose bytes are not git's cleaned form
    # (the untracked CRLF notes under `text=auto`) differed from the old checkpoint's blob
    # and was rewritten, its CRLFs lost, though nobody had touched it.
    (repo / ".gitattributes").write_text("* text=auto\n")
    commit_files(repo, {"f.txt": b"one\n", "w.txt": CRLF})  # w.txt: CRLF on disk, LF in git
    (repo / "notes.txt").write_bytes(CRLF)
    cid = "20250101T000000Z-000001"
    _old_checkpoint(repo, cid)
    (repo / "f.txt").write_bytes(b"two\n")
    layout = find_repo(repo)

    dry = restore_checkpoint(layout, cid, dry_run=True)
    assert [(c.action, c.path) for c in dry.changes] == [("modify", "f.txt")]
    result = restore_checkpoint(layout, cid)

    assert [(c.action, c.path) for c in result.changes] == [("modify", "f.txt")]
    assert (repo / "f.txt").read_bytes() == b"one\n"
    assert (repo / "notes.txt").read_bytes() == CRLF
    assert (repo / "w.txt").read_bytes() == CRLF
    # The safety checkpoint still holds the disk's bytes, and undoes the restore.
    assert result.pre_restore is not None and result.pre_restore.as_is
    held = git(repo, "cat-file", "blob", f"{result.pre_restore.commit}:notes.txt").encode()
    assert held == CRLF
    restore_checkpoint(layout, result.pre_restore.id)
    assert (repo / "f.txt").read_bytes() == b"two\n"
    assert (repo / "notes.txt").read_bytes() == CRLF


def _reads_update_atime(folder: Path) -> bool:
    probe = folder / "atime-probe"
    probe.write_bytes(b"x")
    os.utime(probe, (1000, probe.stat().st_mtime))
    probe.read_bytes()
    read = probe.stat().st_atime > 1000
    probe.unlink()
    return read


def test_untracked_files_left_out_are_not_read(repo: Path, tmp_path: Path) -> None:
    # With any converting attribute a snapshot reads untracked files for a CRLF; one over
    # the size limit is left out of the snapshot, so it must not be read at all (a data
    # file of gigabytes was read on every snapshot). Whether it was read: its access time.
    if not _reads_update_atime(repo):
        pytest.skip("this file system does not record reads (noatime)")
    (repo / ".gitattributes").write_text("* text=auto\n")
    commit_files(repo, {"f.txt": b"one\n"})
    big = repo / "data.bin"
    big.write_bytes(b"a\r\n" * 2000)
    os.utime(big, (1000, big.stat().st_mtime))

    report = build_tree_report(find_repo(repo), 1000)

    assert report.big == ["data.bin"]
    assert big.stat().st_atime == 1000


_MEASURE = """
import resource, sys
from pathlib import Path
from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.paths import find_repo
layout = find_repo(Path(sys.argv[1]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = restore_checkpoint(layout, sys.argv[2])
assert [c.path for c in result.changes] == ["big.bin", "s.bat"], result.changes
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_files_no_attribute_converts_are_not_held_in_memory(repo: Path) -> None:
    # An as-is checkpoint's files were all written through Python, each blob read whole:
    # a restore of a 300 MB file peaked at 600 MB. Only those a checkout would convert
    # need that; the rest stream through `checkout-index`.
    size = 48 << 20
    (repo / ".gitattributes").write_text("*.bat text eol=crlf\n")
    commit_files(repo, {"big.bin": b"x" * size, "s.bat": b"a\r\nb\r\n"})
    (repo / "s.bat").write_bytes(b"lf\n")  # LF on disk, under eol=crlf: kept as it is
    cp = create_checkpoint(find_repo(repo), reason="manual")
    (repo / "big.bin").write_bytes(b"small\n")
    (repo / "s.bat").write_bytes(b"other\r\n")

    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(repo), cp.id],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    # ru_maxrss is in KiB on Linux: the whole file through Python grew it by 28 MB or more.
    assert int(done.stdout.split()[-1]) * 1024 < size // 4
    assert (repo / "big.bin").stat().st_size == size
    assert (repo / "s.bat").read_bytes() == b"lf\n"


def test_files_held_as_a_checkout_writes_them_are_not_counted_as_changed(
    repo: Path, tmp_path: Path
) -> None:
    # A clone writes `*.bat` CRLF under `eol=crlf`; the as-is checkpoint holds those bytes,
    # HEAD the LF blobs: `list` counted every `.bat` as changed and `show` listed them.
    (repo / ".gitattributes").write_text("*.bat text eol=crlf\n")
    commit_files(repo, {f"{n}.bat": b"x\ny\n" for n in (1, 2, 3)} | {"a.txt": b"a\n"})
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "config", "user.email", "t@example.com")
    git(clone, "config", "user.name", "t")
    assert (clone / "1.bat").read_bytes() == b"x\r\ny\r\n"
    (clone / "a.txt").write_bytes(b"a\nedited\n")
    (clone / "2.bat").write_bytes(b"x\r\nedited\r\n")
    runner = CliRunner()
    made = runner.invoke(cli, ["checkpoint", "create", "-C", str(clone)])
    assert made.exit_code == 0, made.output
    cid = made.output.split()[1]

    listed = runner.invoke(cli, ["checkpoint", "list", "--json", "-C", str(clone)])
    shown = runner.invoke(cli, ["checkpoint", "show", cid, "-C", str(clone)])

    assert listed.exit_code == 0 and shown.exit_code == 0, listed.output + shown.output
    assert [row["files_changed"] for row in json.loads(listed.output)] == [2]
    assert "2 files changed" in shown.output
    assert "a.txt" in shown.output and "2.bat" in shown.output
    assert "1.bat" not in shown.output and "3.bat" not in shown.output
