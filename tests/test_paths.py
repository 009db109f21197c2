"""Finding the repository: a folder in no working tree is named for what it is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nexusd.errors import GitError
from nexusd.paths import find_repo


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_bare_repository_is_named_for_every_command(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(GitError) as info:
        find_repo(bare / "refs")
    assert f"{bare} is a bare repository" in info.value.message
    assert f"git -C {bare} worktree add" in (info.value.hint or "")
    assert "git init" not in (info.value.hint or "")


def test_a_git_directory_points_to_its_working_tree(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    with pytest.raises(GitError) as info:
        find_repo(tmp_path / ".git")
    assert "is inside the git directory" in info.value.message
    assert f"-C {tmp_path}" in (info.value.hint or "")


def test_outside_any_repository_git_init_is_suggested(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        find_repo(tmp_path)
    assert "is not inside a git repository" in info.value.message
    assert "git init" in (info.value.hint or "")
