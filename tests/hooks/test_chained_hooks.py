"""A user's hook chained by ours behaves as before nexusd: status, output, stdin, arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nexusd.hooks.installer import HOOKS, hooks_dir, install, render, status, uninstall
from nexusd.paths import find_repo
from tests.hooks.test_installer import HUSKY_H, events, fingerprint, git


def run(cwd: Path, *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of one command (git's own or `nexusd`)."""
    proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def write_hook(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


FAILING_POST_CHECKOUT = '#!/bin/sh\necho "out: new branch=$3"\necho "err: refused" >&2\nexit 3\n'


def _husky(repo: Path, user_script: str) -> Path:
    """husky v9's layout: stubs in .husky/_ that run .husky/<hook>; returns .husky/_."""
    stubs = repo / ".husky" / "_"
    tail = 'c=$?\n[ $c != 0 ] && echo "husky - $n failed ($c)"\nexit $c\n'
    write_hook(stubs / "h", HUSKY_H + tail)
    write_hook(stubs / "post-checkout", '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
    (repo / ".husky" / "post-checkout").write_text(user_script)
    git(repo, "config", "core.hooksPath", ".husky/_")
    return stubs


@pytest.mark.parametrize("layout_kind", ["plain", "husky"])
def test_a_failing_chained_hook_fails_git_as_before(repo: Path, layout_kind: str) -> None:
    # Used to exit 0: the chained hook ran with `|| true`, then our script said `exit 0`.
    if layout_kind == "husky":
        _husky(repo, FAILING_POST_CHECKOUT.removeprefix("#!/bin/sh\n"))
    else:
        write_hook(repo / ".git" / "hooks" / "post-checkout", FAILING_POST_CHECKOUT)
    layout = find_repo(repo)
    before = run(repo, "git", "checkout", "-q", "-b", "before")
    assert before[0] == 1 and "err: refused" in before[2]  # git: a failing post-checkout
    install(layout)
    after = run(repo, "git", "checkout", "-q", "-b", "after")
    assert after == before  # same exit status, same stdout and stderr, same arguments
    assert len(events(repo, "post-checkout")) == 1  # and nexusd's part still ran


# Rejects a commit that stages `secret.txt` (pre-commit) or whose message says WIP
# (commit-msg, which gets the message file as its argument).
GATE = """#!/bin/sh
if [ $# -eq 1 ]; then
	grep -q WIP "$1" || exit 0
	echo "commit-msg: no WIP commits" >&2
else
	git diff --cached --name-only | grep -qx secret.txt || exit 0
	echo "pre-commit: secret.txt is staged" >&2
fi
exit 1
"""


@pytest.mark.parametrize("hook", ["pre-commit", "commit-msg"])
def test_a_chained_gate_hook_still_aborts_the_commit(repo: Path, hook: str) -> None:
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    write_hook(directory / hook, GATE)
    pristine = fingerprint(directory)
    (repo / "secret.txt").write_text("k\n")
    git(repo, "add", "secret.txt")
    head = git(repo, "rev-parse", "HEAD")
    message = "WIP secret" if hook == "commit-msg" else "add secret"
    before = run(repo, "git", "commit", "-qm", message)
    assert before[0] == 1 and f"{hook}: " in before[2]
    install(layout, hooks=(hook, *HOOKS))
    assert run(repo, "git", "commit", "-qm", message) == before
    assert git(repo, "rev-parse", "HEAD") == head  # nothing was committed
    if hook == "commit-msg":
        git(repo, "commit", "-qm", "add the key")  # a passing hook lets the commit through
    else:
        git(repo, "rm", "-q", "--cached", "secret.txt")
        (repo / "ok.txt").write_text("ok\n")
        git(repo, "add", "ok.txt")
        git(repo, "commit", "-qm", "ok")
    assert git(repo, "rev-parse", "HEAD") != head
    uninstall(layout)
    assert fingerprint(directory) == pristine  # the user's gate is back, byte for byte


PRE_PUSH = """#!/bin/sh
while read -r local_ref local_sha remote_ref remote_sha; do
	echo "pre-push to $1 ($2): $local_ref -> $remote_ref" >&2
	[ "$remote_ref" = refs/heads/main ] && { echo "main is protected" >&2; exit 1; }
done
exit 0
"""


def test_a_chained_pre_push_reads_the_refs_on_stdin_and_can_refuse(
    repo: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    write_hook(directory / "pre-push", PRE_PUSH)
    pristine = fingerprint(directory)
    before = run(repo, "git", "push", "-q", "origin", "main")
    assert before[0] == 1
    assert f"pre-push to origin ({remote}): refs/heads/main -> refs/heads/main" in before[2]
    install(layout, hooks=("pre-push", *HOOKS))
    assert run(repo, "git", "push", "-q", "origin", "main") == before
    assert git(remote, "branch", "--list") == ""  # the push was refused
    assert run(repo, "git", "push", "-q", "origin", "main:topic")[0] == 0
    assert git(remote, "branch", "--list").split() == ["topic"]
    uninstall(layout)
    assert fingerprint(directory) == pristine


def _v1(hook: str) -> str:
    """Our script as nexusd wrote it before v2: the chained hook's status was swallowed."""
    text = render(hook, "exec").replace(f" {hook} v2\n", f" {hook} v1\n")
    head = text[: text.index("# The hook that was here before")]
    return head + (
        "case $0 in */*) nexusd_dir=${0%/*} ;; *) nexusd_dir=. ;; esac\n"
        "nexusd_prev=$nexusd_dir/$nexusd_hook.nexusd-chained\n"
        'if [ -x "$nexusd_prev" ]; then "$nexusd_prev" "$@" || true; fi\nexit 0\n'
    )


def test_hooks_from_an_older_nexusd_are_outdated_until_installed_again(repo: Path) -> None:
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    write_hook(directory / "post-checkout", FAILING_POST_CHECKOUT)
    install(layout)
    write_hook(directory / "post-checkout", _v1("post-checkout"))  # as an older nexusd left it
    assert run(repo, "git", "checkout", "-q", "-b", "old")[0] == 0  # the failure was hidden
    code, out, err = run(repo, sys.executable, "-m", "nexusd", "hooks", "status")
    assert code == 0 and "outdated" in out and "run `nexusd hooks install`" in err
    assert [s.state for s in status(layout)] == ["installed", "installed", "outdated"]
    assert run(repo, sys.executable, "-m", "nexusd", "hooks", "install")[0] == 0
    assert [s.state for s in status(layout)] == ["installed"] * 3
    assert run(repo, "git", "checkout", "-q", "-b", "new")[0] == 1


def test_an_outdated_hook_behind_pre_commit_is_updated_in_place(repo: Path) -> None:
    layout = find_repo(repo)
    directory = hooks_dir(layout)
    install(layout)
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install", "-t", "post-commit"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    write_hook(directory / "post-commit.legacy", _v1("post-commit"))
    assert status(layout)[0].state == "outdated"
    install(layout)
    assert status(layout)[0].state == "behind-pre-commit"
    assert (directory / "post-commit.legacy").read_text() == render("post-commit", "exec")
