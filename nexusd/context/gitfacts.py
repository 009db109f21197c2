"""Git facts for the context bundle: branch, HEAD, dirty files, recent commits per artifact.

Three short `git` subprocesses (status, HEAD, log) keep this to a few milliseconds;
nothing is cached, so every answer sees the repository as it is now.
"""

from __future__ import annotations

import posixpath
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nexusd.git import start_git

# Commits listed per artifact, and dirty entries kept in the bundle.
COMMITS_PER_ARTIFACT = 3
MAX_DIRTY = 200
_LOG_SCAN = 200


@dataclass(frozen=True)
class Commit:
    """One commit: abbreviated sha, subject, author date (ISO 8601)."""

    sha: str
    subject: str
    date: str


@dataclass(frozen=True)
class DirtyFile:
    """One `git status` entry: a two-letter code (`M `, ` M`, `??`, `R `…) and the path."""

    code: str
    path: str
    origin: str = ""  # a rename's or copy's original path


@dataclass(frozen=True)
class GitFacts:
    """The repository's state when the request was answered."""

    branch: str | None  # None when HEAD is detached
    head: str | None  # None before the first commit
    head_subject: str = ""
    dirty: tuple[DirtyFile, ...] = ()
    dirty_total: int = 0
    recent: Mapping[str, tuple[Commit, ...]] = field(default_factory=dict)
    error: str | None = None

    @property
    def detached(self) -> bool:
        """HEAD points at a commit, not a branch."""
        return self.branch is None and self.head is not None


@dataclass(frozen=True)
class _Result:
    returncode: int
    stdout: bytes
    stderr: bytes


def _start(root: Path, *args: str, literal: bool = False) -> subprocess.Popen[bytes]:
    # Artifact paths are file names, never pathspec magic.
    return start_git(root, *args, env={"GIT_LITERAL_PATHSPECS": "1"} if literal else None)


def _finish(proc: subprocess.Popen[bytes] | None) -> _Result:
    if proc is None:
        return _Result(1, b"", b"")
    out, err = proc.communicate()
    return _Result(proc.returncode, out, err)


# nexusd's own files (its folder, the request folders, MEMORY.md, the daily notes): what
# `nexusd init` and the daemon write is not the user's work in progress. The planner passes
# the configured ones (`scaffold.own_files`).
OWN_PATHS = (".nexus", ".scratchpad_logs", ".scratchpad", "MEMORY.md", "memory/daily")


def _excluded(own: Sequence[str]) -> list[str]:
    """`git status` pathspecs: the whole tree less nexusd's own files (a pattern outside the
    repository, or empty, is dropped: git would refuse the whole command)."""
    specs = []
    for raw in own:
        spec = posixpath.normpath(raw.strip().replace("\\", "/"))
        if raw.strip() and not spec.startswith(("/", "..")) and spec != ".":
            specs.append(f":(exclude){spec}")
    return ["--", ".", *specs] if specs else []


def _parse_status(out: bytes) -> tuple[str | None, str | None, list[DirtyFile]]:
    """Parse `git status --porcelain=v2 --branch -z`."""
    branch: str | None = None
    head: str | None = None
    dirty: list[DirtyFile] = []
    records = out.split(b"\0")
    i = 0
    while i < len(records):
        rec = records[i].decode("utf-8", "replace")
        i += 1
        if not rec:
            continue
        if rec.startswith("# branch.oid "):
            oid = rec.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
        elif rec.startswith("# branch.head "):
            name = rec.removeprefix("# branch.head ")
            branch = None if name == "(detached)" else name
        elif rec[0] == "1":
            parts = rec.split(" ", 8)
            dirty.append(DirtyFile(parts[1].replace(".", " "), parts[8]))
        elif rec[0] == "2":
            parts = rec.split(" ", 9)
            # The original path of a rename follows as its own record.
            origin = records[i].decode("utf-8", "replace") if i < len(records) else ""
            dirty.append(DirtyFile(parts[1].replace(".", " "), parts[9], origin))
            i += 1
        elif rec[0] == "u":
            parts = rec.split(" ", 10)
            dirty.append(DirtyFile(parts[1], parts[10]))
        elif rec[0] == "?":
            dirty.append(DirtyFile("??", rec[2:]))
    return branch, head, dirty


def _start_log(root: Path, paths: list[str]) -> subprocess.Popen[bytes] | None:
    """One `git log` walk over the artifacts' history (None when there are no artifacts)."""
    if not paths:
        return None
    return _start(
        root,
        "log",
        f"-n{_LOG_SCAN}",
        "--no-renames",
        "--format=%x1e%h%x1f%s%x1f%aI",
        "--name-only",
        "-z",
        "--",
        *paths,
        literal=True,
    )


def _recent_commits(result: _Result, paths: list[str]) -> dict[str, tuple[Commit, ...]]:
    """The last commits touching each path, from the output of `_start_log`."""
    if result.returncode != 0 or not paths:
        return {}
    found: dict[str, list[Commit]] = {p: [] for p in paths}
    for chunk in result.stdout.decode("utf-8", "replace").split("\x1e"):
        if not chunk.strip():
            continue
        header, _, names = chunk.partition("\n")
        sha, subject, date = [*header.split("\x1f"), "", ""][:3]
        commit = Commit(sha=sha, subject=subject, date=date)
        touched = {n.strip("\n") for n in names.split("\0") if n.strip("\n")}
        for path in paths:
            hit = path in touched or any(t.startswith(path.rstrip("/") + "/") for t in touched)
            if hit and len(found[path]) < COMMITS_PER_ARTIFACT:
                found[path].append(commit)
        if all(len(v) >= COMMITS_PER_ARTIFACT for v in found.values()):
            break
    return {p: tuple(v) for p, v in found.items()}


def collect_git_facts(
    root: Path, artifact_paths: Iterable[str] = (), own: Sequence[str] = OWN_PATHS
) -> GitFacts:
    """Branch (or detached HEAD), HEAD sha and subject, dirty files but nexusd's `own`
    (repository-relative folders, files or globs), commits per artifact."""
    paths = list(artifact_paths)
    # The three run at once: the answer waits for the slowest, not for their sum.
    status_args = ("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal")
    procs = (
        _start(root, *status_args, *_excluded(own)),
        _start(root, "log", "-1", "--format=%s", "HEAD"),
        _start_log(root, paths),
    )
    status, subject_log, history = (_finish(p) for p in procs)
    if status.returncode != 0:
        message = status.stderr.decode("utf-8", "replace").strip() or "git status failed"
        return GitFacts(branch=None, head=None, error=message)
    branch, head, dirty = _parse_status(status.stdout)
    subject = subject_log.stdout.decode("utf-8", "replace").strip() if head else ""
    recent = _recent_commits(history, paths) if head is not None else {}
    return GitFacts(
        branch=branch,
        head=head,
        head_subject=subject,
        dirty=tuple(dirty[:MAX_DIRTY]),
        dirty_total=len(dirty),
        recent=recent,
    )
