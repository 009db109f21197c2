"""Checkpoint commands in a bare repository or a git directory say what is wrong and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.errors import GitError

from .gitutil import git

COMMANDS = [
    ["create"],
    ["list"],
    ["show", "x"],
    ["diff", "x"],
    ["restore", "x"],
    ["drop", "x"],
    ["gc"],
    ["push", "origin"],
    ["fetch", "origin"],
]


def _run(where: Path, args: list[str], *, cwd: bool = False) -> tuple[int, str]:
    runner = CliRunner()
    if cwd:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(where)
            result = runner.invoke(cli, ["checkpoint", *args])
    else:
        result = runner.invoke(cli, ["checkpoint", *args, "-C", str(where)])
    return result.exit_code, result.output


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_bare_repository_is_named_and_a_working_tree_suggested(
    tmp_path: Path, args: list[str]
) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))

    code, out = _run(bare, args)

    assert code == GitError.exit_code
    assert f"{bare} is a bare repository" in out
    assert "working tree" in out
    assert f"git -C {bare} worktree add" in out and f"git clone {bare}" in out
    assert "not inside a git repository" not in out and "git init" not in out


def test_a_folder_inside_a_bare_repository_names_it_too(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))

    code, out = _run(bare / "refs", ["list"], cwd=True)

    assert code == GitError.exit_code
    assert f"{bare} is a bare repository" in out


def test_the_git_directory_of_a_checkout_points_to_its_working_tree(repo: Path) -> None:
    code, out = _run(repo / ".git", ["create"])

    assert code == GitError.exit_code
    assert "is inside the git directory" in out
    assert f"-C {repo}" in out
    assert "git init" not in out


def test_a_working_tree_added_to_a_bare_repository_takes_checkpoints(
    repo: Path, tmp_path: Path
) -> None:
    # What the message suggests works: the checkpoint's ref lands in the bare repository.
    bare = tmp_path / "served.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(bare, "worktree", "add", "-q", str(tmp_path / "work"))

    code, out = _run(tmp_path / "work", ["create"])

    assert code == 0, out
    assert "refs/nexus/checkpoints/" in git(bare, "for-each-ref", "refs/nexus/checkpoints")


def test_outside_any_repository_the_message_is_unchanged(tmp_path: Path) -> None:
    code, out = _run(tmp_path, ["list"])

    assert code == GitError.exit_code
    assert "is not inside a git repository" in out
