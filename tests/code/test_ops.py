"""The code operations' answers: why a path names no indexed file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.code.ops import _not_listed
from tests.conftest import git


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        ("/etc/hostname", "it is outside the repository"),
        ("../elsewhere.py", "it is outside the repository"),
        ("pkg/../../up.py", "it is outside the repository"),
        ("link.py", "it is a symbolic link, and links are never followed"),
        ("ignored.py", "git does not track it and .gitignore excludes it"),
        ("{root}/ignored.py", "git does not track it and .gitignore excludes it"),
        ("nowhere.py", "no such file in the repository"),
        ("x" * 300 + ".py", "no such file in the repository"),  # too long to be a name
        ("nul\0.py", "no such file in the repository"),
        # Files git lists nowhere, for reasons that are not .gitignore's:
        ("vendor/lib/mod.py", "it is inside `vendor/lib`, a submodule or another git"),
        (".git/config", "it is inside `.git`, git's own folder"),
        ("etc/passwd", "it is reached through `etc`, a symbolic link"),
        ("pipe.py", "it is not a regular file (a FIFO, socket or device)"),
        ("folder", "it is a folder: name one file in it"),
        ("fresh.py", "git does not list it (`git status` says why)"),
    ],
)
def test_a_path_git_lists_no_file_for_says_why(tmp_path: Path, tail: str, why: str) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("ignored.py\n", encoding="utf-8")
    (tmp_path / "ignored.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "fresh.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "link.py").symlink_to("/etc/hostname")
    (tmp_path / "etc").symlink_to("/etc")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "folder").mkdir()
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    git(tmp_path / "vendor" / "lib", "init", "-q")
    (tmp_path / "vendor" / "lib" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    assert _not_listed(tmp_path, tail.format(root=tmp_path)).startswith(why)
