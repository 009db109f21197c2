"""Hook installer with real `git commit`: chaining, pre-commit, husky, uninstall."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.errors import GitError
from nexusd.hooks.installer import hooks_dir, install, status, uninstall
from nexusd.paths import find_repo


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


def fingerprint(directory: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry of a hooks directory: name -> (mode, bytes or link target)."""
    if not directory.exists():
        return {}
    out = {}
    for path in sorted(directory.rglob("*")):
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            out[str(path.relative_to(directory))] = (st.st_mode, os.readlink(path).encode())
        elif stat.S_ISREG(st.st_mode):
            out[str(path.relative_to(directory))] = (st.st_mode, path.read_bytes())
    return out


def events(repo: Path, hook: str) -> list[Path]:
    return sorted((repo / ".git" / "nexus" / "inbox").glob(f"{hook}.*.jsonl"))


def commit(repo: Path, name: str) -> None:
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-qm", name)


def test_install_fresh_then_uninstall(repo: Path) -> None:
    layout = find_repo(repo)
    before = fingerprint(hooks_dir(layout))
    rows = install(layout)
    assert [r.state for r in rows] == ["installed"] * 3
    assert install(layout) == rows  # idempotent
    commit(repo, "a.txt")
    assert len(events(repo, "post-commit")) == 1
    uninstall(layout)
    assert fingerprint(hooks_dir(layout)) == before
    assert [r.state for r in status(layout)] == ["missing"] * 3


@pytest.mark.parametrize("user_hook", ['#!/bin/sh\necho "$@" >> "$MARK"\n', "LINK"])
def test_user_hook_is_chained_and_restored(repo: Path, tmp_path: Path, user_hook: str) -> None:
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    mark = tmp_path / "mark"
    real = tmp_path / "user-post-checkout"
    real.write_text('#!/bin/sh\necho "$@" >> "$MARK"\nexit 3\n')
    real.chmod(0o750)
    target = directory / "post-checkout"
    if user_hook == "LINK":
        target.symlink_to(real)
    else:
        target.write_text(user_hook)
        target.chmod(0o751)
    before = fingerprint(directory)
    install(layout)
    install(layout)  # a second install keeps the chain as it is
    assert status(layout)[2].chained == directory / "post-checkout.nexusd-chained"
    env = {**os.environ, "MARK": str(mark)}
    proc = subprocess.run(
        ["git", "checkout", "-q", "-b", "topic"],
        cwd=repo,
        env=env,
        capture_output=True,
        check=False,
    )
    # The linked post-checkout exits 3, so git checkout exits 1, as it did before nexusd.
    assert proc.returncode == (1 if user_hook == "LINK" else 0)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert mark.read_text().split() == [head, head, "1"]
    assert len(events(repo, "post-checkout")) == 1
    uninstall(layout)
    assert fingerprint(directory) == before


def _pre_commit(repo: Path, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _pre_commit_config(repo: Path, mark: Path) -> None:
    entry = f"sh -c 'echo $0 >> {mark}'"
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        f"  - id: pre\n    name: pre\n    entry: {entry} pre\n    language: system\n"
        "    pass_filenames: false\n    always_run: true\n    stages: [pre-commit]\n"
        f"  - id: post\n    name: post\n    entry: {entry} post\n    language: system\n"
        "    pass_filenames: false\n    always_run: true\n    stages: [post-commit]\n"
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "pre-commit config", "--no-verify")


@pytest.mark.parametrize("order", ["pre-commit-first", "nexusd-first"])
def test_pre_commit_framework_either_order(repo: Path, tmp_path: Path, order: str) -> None:
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    mark = tmp_path / "mark"
    _pre_commit_config(repo, mark)
    pristine = fingerprint(directory)
    if order == "pre-commit-first":
        _pre_commit(repo, "install", "-t", "pre-commit", "-t", "post-commit")
        with_pre_commit = fingerprint(directory)
        install(layout)
        assert status(layout)[0].state == "installed"
    else:
        install(layout)
        _pre_commit(repo, "install", "-t", "pre-commit", "-t", "post-commit")
        assert status(layout)[0].state == "behind-pre-commit"
    commit(repo, "b.txt")
    assert mark.read_text().split() == ["pre", "post"]
    assert len(events(repo, "post-commit")) == 1
    uninstall(layout)
    if order == "pre-commit-first":
        assert fingerprint(directory) == with_pre_commit
    _pre_commit(repo, "uninstall", "-t", "pre-commit", "-t", "post-commit")
    assert fingerprint(directory) == pristine


HUSKY_H = """#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
"""


def test_husky_hooks_path(repo: Path, tmp_path: Path) -> None:
    husky = repo / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "_" / "h").write_text(HUSKY_H)
    for hook in ("post-commit", "post-merge", "post-checkout", "pre-commit"):
        stub = husky / "_" / hook
        stub.write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
        stub.chmod(0o755)
    (husky / "_" / ".gitignore").write_text("*\n")
    mark = tmp_path / "mark"
    (husky / "post-commit").write_text(f"echo husky-post-commit >> {mark}\n")
    git(repo, "config", "core.hooksPath", ".husky/_")
    layout = find_repo(repo)
    assert hooks_dir(layout) == husky / "_"
    before = fingerprint(husky)
    install(layout)
    commit(repo, "c.txt")
    assert mark.read_text() == "husky-post-commit\n"
    assert len(events(repo, "post-commit")) == 1
    uninstall(layout)
    assert fingerprint(husky) == before


def test_custom_hooks_path_created_and_removed(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", "githooks")
    layout = find_repo(repo)
    install(layout)
    assert (repo / "githooks" / "post-commit").exists()
    commit(repo, "d.txt")
    assert len(events(repo, "post-commit")) == 1
    uninstall(layout)
    assert not (repo / "githooks").exists()


def test_hooks_fail_open(repo: Path, tmp_path: Path) -> None:
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    (directory / "post-commit").write_text("#!/bin/sh\nexit 7\n")
    (directory / "post-commit").chmod(0o755)
    install(layout)
    # The inbox cannot be created: a file sits where its folder should be.
    inbox = layout.inbox_dir
    inbox.rmdir()
    inbox.write_text("in the way")
    for hook, status_of_user_hook in (("post-merge", 0), ("post-commit", 7)):
        proc = subprocess.run(
            [str(directory / hook)], cwd=repo, capture_output=True, text=True, check=False
        )
        # nexusd's failure is silent and costs nothing; the status is the user's hook's.
        assert proc.returncode == status_of_user_hook
        assert proc.stdout == "" and proc.stderr == ""
    commit(repo, "e.txt")  # git commit succeeds
    assert inbox.read_text() == "in the way"


def test_a_conflict_on_one_hook_changes_nothing(repo: Path) -> None:
    # Used to move post-commit aside and install it, then fail on post-merge: half done.
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    for name in ("post-commit", "post-merge", "post-merge.nexusd-chained"):
        (directory / name).write_text(f"#!/bin/sh\necho {name}\n")
        (directory / name).chmod(0o755)
    before = fingerprint(directory)
    with pytest.raises(GitError, match=r"post-merge\.nexusd-chained already exists"):
        install(layout)
    assert fingerprint(directory) == before


@pytest.mark.parametrize("setting", ["a-file", "a-file/hooks"])
def test_a_hooks_path_that_is_no_folder_is_an_error_not_a_traceback(
    repo: Path, setting: str
) -> None:
    (repo / "a-file").write_text("not a folder\n")
    git(repo, "config", "core.hooksPath", setting)
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", "hooks", "install"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 5, proc.stderr  # was 70, with a traceback
    assert "Traceback" not in proc.stderr and "fix:" in proc.stderr
    assert str(repo / "a-file") in proc.stderr
    assert (repo / "a-file").read_text() == "not a folder\n"


def test_a_global_hooks_folder_queues_only_where_nexusd_runs(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    served, other = make_repo("served"), make_repo("other")
    shared = tmp_path / "global-hooks"
    git(served, "config", "--global", "core.hooksPath", str(shared))
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", "hooks", "install"],
        cwd=served,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "core.hooksPath comes from" in proc.stderr and "every repository" in proc.stderr
    commit(served, "a.txt")
    commit(other, "b.txt")
    assert len(events(served, "post-commit")) == 1
    # Used to leave <other>/.git/nexus/inbox/ growing by a file per commit, never drained.
    assert not (other / ".git" / "nexus").exists()
