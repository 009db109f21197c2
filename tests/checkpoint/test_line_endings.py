"""Files git converts (line endings, `ident`) come back from a checkpoint byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.checkpoint.model import REF_PREFIX
from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.cli import cli
from nexusd.paths import find_repo

from .gitutil import commit_files, git, tree_files

CRLF = b"one\r\ntwo\r\n"
LF = b"one\ntwo\n"
MIXED = b"one\ntwo\r\nthree\n"


def _write(repo: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (repo / rel).write_bytes(data)


def _round_trip(repo: Path) -> None:
    """Checkpoint the working tree, overwrite every file, restore: the same bytes are back,
    and undoing the restore brings the overwritten ones back as they were too."""
    layout = find_repo(repo)
    before = tree_files(repo)
    cp = create_checkpoint(layout, reason="manual")
    for rel in before:
        (repo / rel).write_bytes(b"overwritten\n")
    overwritten = tree_files(repo)

    result = restore_checkpoint(layout, cp.id)

    assert result.skipped == ()  # no file taken for one edited since its snapshot
    assert tree_files(repo) == before
    assert result.pre_restore is not None
    restore_checkpoint(layout, result.pre_restore.id)
    assert tree_files(repo) == overwritten


# (settings, .gitattributes, committed files, working-tree files written after the commit)
CASES = {
    "autocrlf-true": (
        {"core.autocrlf": "true"},
        None,
        {"lf.txt": LF, "crlf.txt": CRLF},
        # an LF file would come back CRLF, an untracked one too
        {"lf.txt": b"edited\nlf\n", "new_lf.txt": LF, "crlf.txt": b"edited\r\n"},
    ),
    "autocrlf-input": (
        {"core.autocrlf": "input"},
        None,
        {"a.txt": LF},
        {"a.txt": CRLF, "new.txt": MIXED},  # CRLF would come back LF
    ),
    "text-auto": (
        {},
        b"* text=auto\n",
        {"w.txt": CRLF, "lf.txt": LF},
        # a CRLF-only edit: git's cleaned blob is the committed one, `add` reports nothing
        {"w.txt": b"x\r\ny\r\n", "new.txt": CRLF, "lf.txt": CRLF},
    ),
    "eol-crlf": (
        {},
        b"*.bat text eol=crlf\n",
        # keep.bat stays as the checkout wrote it (CRLF on disk, LF in git)
        {"s.bat": CRLF, "keep.bat": CRLF},
        {"s.bat": MIXED, "lf.bat": LF},  # LF lines would come back CRLF
    ),
    "ident": (
        {},
        b"*.c ident\n",
        {"id.c": b"/* $Id$ */\n"},
        {"hand.c": b"/* $Id: written by hand $ */\n"},  # a checkout writes the blob's id
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_converted_files_come_back_byte_for_byte(repo: Path, case: str) -> None:
    settings, attributes, committed, edits = CASES[case]
    for key, value in settings.items():
        git(repo, "config", key, value)
    if attributes is not None:
        (repo / ".gitattributes").write_bytes(attributes)
    commit_files(repo, committed)
    if case == "ident":
        (repo / "id.c").unlink()
        git(repo, "checkout", "--", "id.c")  # the blob's id expanded on disk
        assert b"$Id: " in (repo / "id.c").read_bytes()
    _write(repo, edits)

    _round_trip(repo)


def test_an_attributes_file_not_committed_yet_counts(repo: Path) -> None:
    commit_files(repo, {"w.txt": LF})
    (repo / ".gitattributes").write_text("*.txt text\n")  # untracked: `add` normalizes by it
    (repo / "w.txt").write_bytes(CRLF)
    (repo / "new.txt").write_bytes(MIXED)

    _round_trip(repo)


def test_the_checkpoint_holds_the_bytes_on_disk(repo: Path) -> None:
    (repo / ".gitattributes").write_text("* text=auto\n")
    commit_files(repo, {"w.txt": LF})
    (repo / "w.txt").write_bytes(CRLF)

    cp = create_checkpoint(find_repo(repo), reason="manual")

    shown = git(repo, "cat-file", "blob", f"{cp.commit}:w.txt").encode()
    assert shown == CRLF
    assert cp.as_is
    assert git(repo, "log", "-1", "--format=%(trailers:key=Nexus-Bytes)", cp.commit).strip() == (
        "Nexus-Bytes: as-is"
    )


def test_a_filter_drivers_files_keep_gits_round_trip(repo: Path) -> None:
    # A driver (Git LFS) keeps large contents out of the object store: its cleaned form is
    # what the checkpoint holds, and its smudge gives the file back.
    git(repo, "config", "filter.rot13.clean", "tr a-zA-Z n-za-mN-ZA-M")
    git(repo, "config", "filter.rot13.smudge", "tr a-zA-Z n-za-mN-ZA-M")
    (repo / ".gitattributes").write_text("*.r filter=rot13 text eol=crlf\n")
    commit_files(repo, {"secret.r": b"hello\r\n"})
    (repo / "secret.r").write_bytes(b"abc\r\n")
    layout = find_repo(repo)

    cp = create_checkpoint(layout, reason="manual")
    assert git(repo, "cat-file", "blob", f"{cp.commit}:secret.r") == "nop\n"
    (repo / "secret.r").write_bytes(b"other\r\n")
    restore_checkpoint(layout, cp.id)

    assert (repo / "secret.r").read_bytes() == b"abc\r\n"


def test_a_checkpoint_from_before_is_checked_out_as_git_would(repo: Path) -> None:
    # Made without `Nexus-Bytes`, it holds git's cleaned blobs: a restore smudges them.
    git(repo, "config", "core.autocrlf", "true")
    commit_files(repo, {"a.txt": CRLF})
    tree = git(repo, "write-tree").strip()
    cid = "20250101T000000Z-000001"
    message = f"old checkpoint\n\nNexus-Reason: manual\nNexus-Id: {cid}\n"
    commit = git(repo, "commit-tree", tree, "-p", "HEAD", input=message.encode()).strip()
    git(repo, "update-ref", REF_PREFIX + cid, commit)
    (repo / "a.txt").write_bytes(b"changed\r\n")

    restore_checkpoint(find_repo(repo), cid)

    assert (repo / "a.txt").read_bytes() == CRLF


def test_the_cli_round_trip_keeps_crlf(repo: Path) -> None:
    (repo / ".gitattributes").write_text("* text=auto\n")
    commit_files(repo, {"w.txt": LF})
    (repo / "w.txt").write_bytes(CRLF)
    (repo / "new.txt").write_bytes(CRLF)
    runner = CliRunner()
    made = runner.invoke(cli, ["checkpoint", "create", "-C", str(repo)])
    assert made.exit_code == 0, made.output
    cid = made.output.split()[1]
    (repo / "w.txt").write_bytes(b"gone\n")
    (repo / "new.txt").write_bytes(b"gone\n")

    done = runner.invoke(cli, ["checkpoint", "restore", cid, "-C", str(repo)])

    assert done.exit_code == 0, done.output
    assert (repo / "w.txt").read_bytes() == CRLF
    assert (repo / "new.txt").read_bytes() == CRLF
