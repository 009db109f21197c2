"""The code operations' answers: why a path names no indexed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.code.ops import _not_listed


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
    ],
)
def test_a_path_git_lists_no_file_for_says_why(tmp_path: Path, tail: str, why: str) -> None:
    (tmp_path / "ignored.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "link.py").symlink_to("/etc/hostname")
    assert _not_listed(tmp_path, tail.format(root=tmp_path)).startswith(why)
