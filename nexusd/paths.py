"""Where a served repository keeps its canonical files and its derived state.

One daemon per working tree. A linked worktree (`git worktree add`) has its own
files, requests and memory, so it gets its own daemon and state under its own git
directory (`.git/worktrees/<name>/nexus/`); the main checkout's stays in
`.git/nexus/`. A daemon started in a worktree used to take the repository-wide
lock and pid file, so `nexusd status` in the main checkout said "running" while
nothing answered its requests. Only what git shares between worktrees is shared:
checkpoint refs, and the hooks' inbox with its manifest (the hooks themselves are
shared; each daemon handles only the events of its own worktree and leaves the others
in the inbox for that worktree's daemon).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nexusd.errors import GitError
from nexusd.git import git_text, try_git_text


@dataclass(frozen=True)
class RepoLayout:
    """Paths of one served working tree: its files and its `<git-dir>/nexus/` state."""

    root: Path
    git_dir: Path
    git_common_dir: Path

    @property
    def nexus_dir(self) -> Path:
        """This working tree's derived state: never committed, always rebuildable."""
        return self.git_dir / "nexus"

    @property
    def shared_dir(self) -> Path:
        """State shared by every worktree of the repository (hook events, hooks manifest)."""
        return self.git_common_dir / "nexus"

    @property
    def is_linked_worktree(self) -> bool:
        """True in a worktree made by `git worktree add` (not the main checkout)."""
        return self.git_dir.resolve() != self.git_common_dir.resolve()

    @property
    def config_file(self) -> Path:
        return self.root / ".nexus" / "config.yaml"

    @property
    def pidfile(self) -> Path:
        return self.nexus_dir / "nexusd.pid"

    @property
    def lockfile(self) -> Path:
        return self.nexus_dir / "nexusd.lock"

    @property
    def logs_dir(self) -> Path:
        return self.nexus_dir / "logs"

    @property
    def log_file(self) -> Path:
        return self.logs_dir / "nexusd.jsonl"

    @property
    def inbox_dir(self) -> Path:
        return self.shared_dir / "inbox"

    @property
    def inbox_lock(self) -> Path:
        """Serializes draining between every daemon and command of the repository."""
        return self.shared_dir / "inbox.lock"

    @property
    def state_dir(self) -> Path:
        return self.nexus_dir / "state"

    @property
    def index_dir(self) -> Path:
        return self.nexus_dir / "index"

    @property
    def socket_path(self) -> Path:
        return self.nexus_dir / "nexusd.sock"

    @property
    def memory_file(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def daily_dir(self) -> Path:
        return self.root / "memory" / "daily"


def _git(cwd: Path, *args: str) -> str:
    try:
        return git_text(cwd, *args)
    except GitError as exc:
        # A bare repository or a git directory is a repository: `git init` would be wrong.
        better = _no_work_tree(cwd)
        if better is not None:
            raise better from exc
        why = exc.message.split(": ", 1)[-1]  # git's own words, without our command prefix
        raise GitError(
            f"{cwd} is not inside a git repository ({why})",
            hint="cd into your repository, or run `git init` here first",
        ) from exc


def _no_work_tree(where: Path) -> GitError | None:
    """The error for a folder inside a repository but in no working tree (None otherwise)."""
    out = try_git_text(
        where, "rev-parse", "--is-bare-repository", "--is-inside-git-dir", "--absolute-git-dir"
    )
    lines = (out or "").splitlines()
    if len(lines) != 3:
        return None
    bare, inside, git_dir = lines
    if bare == "true":
        return GitError(
            f"{git_dir} is a bare repository: it has no working tree, and nexusd (its"
            " checkpoints, plans and checks) works on a working tree",
            hint=f"run nexusd in a working tree of it: `git -C {git_dir} worktree add <folder>`"
            f" or `git clone {git_dir} <folder>`, then `cd <folder>`; `git -C {git_dir}"
            " for-each-ref refs/nexus/checkpoints` lists the checkpoints pushed here",
        )
    if inside == "true":
        tree = Path(git_dir).parent if Path(git_dir).name == ".git" else None
        return GitError(
            f"{where} is inside the git directory {git_dir}, not in its working tree",
            hint=f"run it from the working tree: `cd {tree}` or `-C {tree}`"
            if tree
            else "run it from the repository's working tree (cd there, or pass it with -C)",
        )
    return None


def find_repo(start: Path | None = None) -> RepoLayout:
    """Locate the repository containing `start` (default: the current directory)."""
    cwd = (start or Path.cwd()).resolve()
    if not cwd.exists():
        raise GitError(f"{cwd} does not exist", hint="pass an existing directory")
    if cwd.is_file():
        cwd = cwd.parent
    out = _git(
        cwd,
        "rev-parse",
        "--path-format=absolute",
        "--show-toplevel",
        "--git-dir",
        "--git-common-dir",
    )
    lines = out.splitlines()
    if len(lines) != 3:
        raise GitError(
            f"{cwd} is inside a git directory, not a work tree",
            hint="run nexusd from the repository's work tree",
        )
    root, git_dir, common = (Path(line) for line in lines)
    return RepoLayout(root=root, git_dir=git_dir, git_common_dir=common)
