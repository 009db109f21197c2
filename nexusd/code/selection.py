"""Which files the code index reads, and the git blob id that keys each one.

Tracked files come from `git ls-files -s` (the blob in the index); files changed in the
working tree and untracked files that `.gitignore` does not exclude are hashed with
`git hash-object`, so an edit is indexed before it is staged. Symlinks and submodules are
never followed: nothing outside the repository is read.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nexusd.git import run_git

# Folders and files that are someone else's code or generated: skipped unless configured.
DEFAULT_EXCLUDE = (
    "node_modules/*",
    "*/node_modules/*",
    "vendor/*",
    "*/vendor/*",
    "third_party/*",
    "*/third_party/*",
    "*.min.js",
    "*.min.css",
    "*.map",
    "*.lock",
    "package-lock.json",
    "*.pb.go",
    "*_pb2.py",
    # Every bug report looks like the repository's issue template: it would always rank first.
    ".github/ISSUE_TEMPLATE/*",
    ".github/PULL_REQUEST_TEMPLATE*",
    ".github/pull_request_template*",
)
# nexusd's files: where `nexusd init` puts them, and plan requests and their responses
# wherever they are. `CodeIndex` adds the configured ones (`scaffold.own_files`).
OWN_FILES = (
    ".nexus/*",
    ".scratchpad_logs/*",
    ".scratchpad/*",
    "memory/daily/*",
    "MEMORY.md",
    "*_plan_request.md",
    "*-plan_request.md",
    "*_plan_response.md",
    "*-plan_response.md",
)
MODE_SYMLINK = "120000"
MODE_SUBMODULE = "160000"


@dataclass(frozen=True)
class RepoFile:
    """One file the index may read: its path, blob id and git mode."""

    path: str
    blob: str
    mode: str = "100644"

    @property
    def skip_reason(self) -> str | None:
        """Why the file is never read (a symlink or a submodule), else None."""
        if self.mode == MODE_SYMLINK:
            return "symlink (not followed)"
        if self.mode == MODE_SUBMODULE:
            return "submodule (not indexed)"
        if not utf8_name(self.path):
            # git keeps names as bytes; the index (LanceDB, JSON answers) keeps text.
            return "file name is not UTF-8 (not indexed)"
        return None


def utf8_name(path: str) -> bool:
    """Whether a path git listed is valid UTF-8 (else it carries surrogate escapes)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
    hint = "check that the repository is readable (`git status` should work)"
    out = run_git(root, *args, input=data, hint=hint)
    return out.decode("utf-8", "surrogateescape")


def _changed(root: Path) -> tuple[list[str], list[str]]:
    """(tracked files modified or deleted in the working tree, untracked files not ignored)."""
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    modified: list[str] = []
    untracked: list[str] = []
    for entry in out.split("\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            untracked.append(path)
        else:
            # Deletions too (` D`, `AD`, `MD`): `list_files` drops the ones that are gone.
            modified.append(path)
    return modified, untracked


def _hash_paths(root: Path, paths: Sequence[str]) -> dict[str, str]:
    files = [p for p in paths if (root / p).is_file() and not (root / p).is_symlink()]
    if not files:
        return {}
    out = _git(root, "hash-object", "--no-filters", "--stdin-paths", stdin="\n".join(files) + "\n")
    return dict(zip(files, out.split(), strict=False))


def list_files(root: Path, *, include_worktree: bool = True) -> list[RepoFile]:
    """Every tracked file with its blob id, working-tree edits and untracked files included."""
    entries: dict[str, RepoFile] = {}
    for line in _git(root, "ls-files", "-s", "-z").split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, blob, _stage = meta.split()
        entries[path] = RepoFile(path, blob, mode)
    if include_worktree:
        modified, untracked = _changed(root)
        for path in modified:
            if path in entries and not os.path.lexists(root / path):
                del entries[path]  # deleted but not staged
        changed = [
            p
            for p in modified
            if p in entries and entries[p].mode not in (MODE_SYMLINK, MODE_SUBMODULE)
        ]
        for path, blob in _hash_paths(root, [*changed, *untracked]).items():
            mode = entries[path].mode if path in entries else "100644"
            entries[path] = RepoFile(path, blob, mode)
    return sorted(entries.values(), key=lambda f: f.path)


def excluded(path: str, patterns: Iterable[str]) -> bool:
    """Whether `path` matches one of the glob `patterns` (fnmatch; `*` crosses folders)."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB: git's own test for binary content."""
    return b"\0" in data[:8192]


def looks_minified(text: str) -> bool:
    """Generated or minified text: very long lines that no person reads or writes."""
    if len(text) < 4096:
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > 300 or max(len(line) for line in text.split("\n")) > 20_000
