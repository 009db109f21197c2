"""Running git: one environment, bytes in and out, failures as GitError saying what to do.

Every git command nexusd runs goes through here (checkpoints, git facts, the code index's
file listing, sandbox snapshots, hooks), so all of them run without a pager or prompts,
in the C locale, and without taking optional locks the user's own git commands need.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from nexusd.errors import GitError

# Checkpoint and note commits use a fixed identity: no dependency on user.name, no signing prompt.
IDENTITY = {
    "GIT_AUTHOR_NAME": "nexusd",
    "GIT_AUTHOR_EMAIL": "nexusd@localhost",
    "GIT_COMMITTER_NAME": "nexusd",
    "GIT_COMMITTER_EMAIL": "nexusd@localhost",
}


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for our git calls: no pager, no prompts, plus `extra`."""
    env = dict(os.environ)
    for var in ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE"):
        env.pop(var, None)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    if extra:
        env.update(extra)
    return env


def run_git(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
    hint: str = "run the same git command yourself to see the full problem",
) -> bytes:
    """Run `git args…` in `cwd`; return stdout, or raise GitError naming the command."""
    proc = git_run(cwd, *args, env=env, input=input)
    if check and proc.returncode != 0:
        raise git_failure(cwd, args, proc, hint=hint)
    return proc.stdout


def git_run(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run `git args…` in `cwd` and return the whole result (stdout, stderr, exit code), for
    a caller that reads what git says on failure too (`push --porcelain`)."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=git_env(env),
        input=input,
        capture_output=True,
        check=False,
    )


def git_failure(
    cwd: Path,
    args: Iterable[str],
    proc: subprocess.CompletedProcess[bytes],
    *,
    hint: str = "run the same git command yourself to see the full problem",
) -> GitError:
    """The GitError of a failed `git_run`: the command, where, and what git said."""
    err = proc.stderr.decode("utf-8", "replace").strip()
    return GitError(
        f"`git {_describe(args)}` failed in {cwd}: {err or 'exit ' + str(proc.returncode)}",
        hint=hint,
    )


# Git's global options that take their value as the next argument.
_VALUED = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env"})


def _describe(args: Iterable[str]) -> str:
    """The subcommand and its first arguments, past git's global options (for messages)."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        # `-c k=v` options alone say nothing of which command failed.
        rest = rest[2:] if rest[0] in _VALUED else rest[1:]
    return " ".join(rest[:3]) or "(no subcommand)"


def git_text(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Like run_git, decoded and stripped."""
    return run_git(cwd, *args, env=env).decode("utf-8", "surrogateescape").strip()


def try_git_text(cwd: Path, *args: str) -> str | None:
    """Stripped stdout of git, or None when git exits non-zero."""
    proc = subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def is_attributes_file(path: str) -> bool:
    """True for a `.gitattributes` file, at the top or in a folder."""
    return path == ".gitattributes" or path.endswith("/.gitattributes")


def join_z(paths: Iterable[str]) -> bytes:
    """Paths as NUL-terminated bytes for git's `-z`/`--pathspec-file-nul` input (split_z's twin)."""
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def split_z(data: bytes) -> list[str]:
    """NUL-separated git output as str paths (undecodable bytes kept via surrogateescape)."""
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


def cat_blobs(cwd: Path, ids: Iterable[str]) -> list[bytes]:
    """The contents of the objects `ids`, in order, through one `git cat-file --batch`."""
    wanted = list(ids)
    if not wanted:
        return []
    out = run_git(cwd, "cat-file", "--batch", input="".join(f"{i}\n" for i in wanted).encode())
    found: list[bytes] = []
    pos = 0
    for _ in wanted:
        # Each object is `<id> <type> <size>\n<data>\n`.
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        found.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return found


def object_kinds(cwd: Path, ids: Iterable[str]) -> dict[str, str]:
    """Each of `ids` → its type (`commit`, `tree`, `blob`, `tag`) or `missing`, through one
    `git cat-file --batch-check`."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    query = "".join(f"{i}\n" for i in wanted).encode()
    out = run_git(cwd, "cat-file", "--batch-check", input=query)
    # Each line is `<id> <type> <size>`, or `<id> missing`.
    return dict(line.split()[:2] for line in out.decode().splitlines() if line.strip())


def try_git(cwd: Path, *args: str) -> bytes | None:
    """Stdout of git, or None when git exits non-zero."""
    proc = subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, check=False)
    return proc.stdout if proc.returncode == 0 else None


def start_git(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `git args…` without waiting, so several can run at once; read it with `communicate`."""
    return subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env=git_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
