"""Small helpers for checkpoint tests: run git, fingerprint a work tree and the git state."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    """Run git in `cwd`; fail the test on error."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr.decode()}"
    return proc.stdout.decode("utf-8", "surrogateescape")


def commit_files(repo: Path, files: dict[str, bytes]) -> None:
    """Write `files` and commit everything (git's line-ending warnings off)."""
    for rel, data in files.items():
        (repo / rel).write_bytes(data)
    git(repo, "-c", "core.safecrlf=false", "add", "-A")
    git(repo, "commit", "-qm", "files")


def tree_files(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every file and symlink under root (not .git): path -> (kind, content or link target)."""
    out: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == root and ".git" in dirnames:
            dirnames.remove(".git")
        names = list(filenames) + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        for name in names:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path).encode("utf-8", "surrogateescape"))
            else:
                kind = "exec" if st.st_mode & 0o100 else "file"
                out[rel] = (kind, path.read_bytes())
    return out


def git_state(root: Path) -> dict[str, str]:
    """What must never change: HEAD, the index file, the stash, refs and reflogs of branches."""
    git_dir = Path(git(root, "rev-parse", "--absolute-git-dir").strip())
    index = git_dir / "index"
    logs = git_dir / "logs"
    reflogs = (
        {str(p.relative_to(logs)): p.read_text() for p in sorted(logs.rglob("*")) if p.is_file()}
        if logs.is_dir()
        else {}
    )
    return {
        "HEAD": (git_dir / "HEAD").read_text(),
        "head_sha": subprocess.run(
            ["git", "rev-parse", "-q", "--verify", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        ).stdout,
        "index": hashlib.sha256(index.read_bytes()).hexdigest() if index.exists() else "-",
        "stash": subprocess.run(
            ["git", "stash", "list"], cwd=root, capture_output=True, text=True, check=False
        ).stdout,
        "branches": git(root, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
        "reflogs": repr(reflogs),
    }
