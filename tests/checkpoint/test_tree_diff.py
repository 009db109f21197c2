"""The files two checkpoints' trees differ in, with status and line counts."""

from __future__ import annotations

from pathlib import Path

from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.checkpoint.tree_diff import ChangedFile, changed_files, line_counts
from nexusd.paths import find_repo


def test_line_counts_read_numstat_binary_as_none() -> None:
    out = b"2\t1\tREADME.md\0-\t-\tlogo.bin\x000\t1\tname\twith tab\0"
    assert line_counts(out) == {
        "README.md": (2, 1),
        "logo.bin": (None, None),
        "name\twith tab": (0, 1),
    }


def test_changed_files_between_two_checkpoints(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "keep.txt").write_text("same\n")
    (repo / "old.txt").write_text("a\nb\n")
    first = create_checkpoint(layout, reason="manual")
    (repo / "old.txt").unlink()
    (repo / "moved.txt").write_text("a\nb\n")  # a move is a delete and an add
    second = create_checkpoint(layout, reason="manual")
    assert changed_files(layout, first.tree, second.tree) == [
        ChangedFile("moved.txt", "added", 2, 0),
        ChangedFile("old.txt", "deleted", 0, 2),
    ]
    assert changed_files(layout, second.tree, second.tree) == []
