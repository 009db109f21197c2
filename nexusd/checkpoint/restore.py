"""Restore a checkpoint into the working tree, safely and undoably.

Only the working tree changes: HEAD and the index stay as they are, so after a
restore `git status` shows the difference as unstaged changes. A `pre-restore`
checkpoint of the current state is taken first; every file the restore removes
or overwrites is in it. Ignored files are never touched.

nexusd's own files (the request folders, MEMORY.md, the daily notes) are left as
they are unless `paths` names them: rolling them back would put back old answers
beside newer requests, or delete answers so that old requests are answered again.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nexusd.checkpoint.listing import drop, resolve
from nexusd.checkpoint.model import Checkpoint
from nexusd.checkpoint.snapshot import (
    MAX_UNTRACKED_BYTES,
    create_checkpoint,
    repo_state,
    snapshot_tree,
    temp_index,
)
from nexusd.errors import GitError
from nexusd.git import join_z, run_git, split_z
from nexusd.paths import RepoLayout

_KIND = {"A": "add", "M": "modify", "T": "modify", "D": "delete"}
# The defaults of `watch.paths` and `memory.sources`; the CLI passes the configured ones.
NEXUS_FILES = (".scratchpad_logs", ".scratchpad", "MEMORY.md", "memory/daily/*.md")
OWN_FILE = "nexusd's own file; name it in the paths to restore it"
UNHELD = "a file no checkpoint holds is there now (kept)"


@dataclass(frozen=True)
class Change:
    """One path the restore would write or remove."""

    action: str  # add | modify | delete | skip
    path: str
    mode: str = ""
    why: str = ""

    def line(self) -> str:
        """`action  path` for printing (paths quoted when they hold control characters)."""
        shown = self.path if self.path.isprintable() else repr(self.path)
        extra = f"  ({self.why})" if self.why else ""
        return f"{self.action:<7} {shown}{extra}"


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did (or, for a dry run, would do)."""

    checkpoint: Checkpoint
    changes: tuple[Change, ...]
    dry_run: bool
    pre_restore: Checkpoint | None = None
    skipped: tuple[Change, ...] = field(default_factory=tuple)


def plan_changes(
    layout: RepoLayout, current_tree: str, target_tree: str, paths: Sequence[str] = ()
) -> list[Change]:
    """The changes that make `current_tree`'s files look like `target_tree` (limited to paths)."""
    out = run_git(
        layout.root,
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        current_tree,
        target_tree,
        "--",
        *paths,
    )
    tokens = split_z(out)
    changes: list[Change] = []
    for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
        _old_mode, new_mode, _a, _b, letter = meta.lstrip(":").split()
        changes.append(Change(_KIND.get(letter[0], "modify"), path, new_mode))
    return changes


def _blocked(root: Path, rel: str) -> str:
    """Why writing `rel` would clobber something the pre-restore checkpoint does not hold."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        anc = root.joinpath(*parts[:i])
        try:
            st = anc.lstat()
        except FileNotFoundError:
            return ""
        if not stat.S_ISDIR(st.st_mode):
            return f"ignored {'/'.join(parts[:i])} is in the way"
    target = root / rel
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(target.lstat().st_mode) and any(target.iterdir()):
            return "a directory with ignored files is in the way"
    return ""


def _ignored_existing(layout: RepoLayout, paths: list[str]) -> set[str]:
    """Which of `paths` exist now as ignored files (never overwritten)."""
    existing = [p for p in paths if os.path.lexists(layout.root / p)]
    if not existing:
        return set()
    proc = run_git(
        layout.root,
        "check-ignore",
        "-z",
        "--stdin",
        input=join_z(existing),
        check=False,
    )
    return set(split_z(proc))


def _unheld(root: Path, planned: Sequence[Change]) -> set[str]:
    """Paths the restore would add where a file exists that the current snapshot lacks.

    An untracked file over the size limit is left out of every snapshot, the pre-restore
    one too (as is one created since): writing the checkpoint's version over it would
    destroy work that nothing can bring back.
    """
    return {c.path for c in planned if c.action == "add" and _holds_file(root, c.path)}


def _holds_file(root: Path, rel: str) -> bool:
    """Whether something other than a folder is at `rel` itself. A path under a file or a
    symbolic link holds nothing of the repository's there (the restore replaces the file or
    link first): `lstat` of `link/a` would follow the link, out of the repository or round
    a loop (`d -> d`: ELOOP)."""
    path = root
    *folders, name = rel.split("/")
    try:
        for part in folders:
            path = path / part
            if not stat.S_ISDIR(path.lstat().st_mode):
                return False
        return not stat.S_ISDIR((path / name).lstat().st_mode)
    except FileNotFoundError:
        return False


def _remove(root: Path, rel: str) -> None:
    path = root / rel
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(path.lstat().st_mode):
            # A gitlink (submodule) or an emptied directory: only remove when empty.
            with contextlib.suppress(OSError):
                path.rmdir()
        else:
            path.unlink()
    parent = path.parent
    while parent != root:
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def restore_checkpoint(
    layout: RepoLayout,
    wanted: str,
    *,
    dry_run: bool = False,
    paths: Sequence[str] = (),
    max_untracked_bytes: int = MAX_UNTRACKED_BYTES,
    nexus_files: Sequence[str] = NEXUS_FILES,
) -> RestoreResult:
    """Make tracked and unignored files match checkpoint `wanted`; HEAD and index untouched.

    Files under `nexus_files` (folders or globs) are skipped unless `paths` names them.
    """
    target = resolve(layout, wanted)
    state = repo_state(layout)
    if state.operation and not dry_run:
        raise GitError(
            f"a {state.operation} is in progress; restoring now would mix two states",
            hint=f"finish it or abort it (`git {state.operation} --abort`), then restore",
        )
    pre: Checkpoint | None = None
    if dry_run:
        current_tree = snapshot_tree(layout, max_untracked_bytes=max_untracked_bytes)
    else:
        # The plan is computed from the pre-restore checkpoint itself, so everything the
        # restore removes or overwrites is in it by construction.
        pre = create_checkpoint(
            layout,
            reason="pre-restore",
            message=f"before restoring {target.id}",
            trailers={"Nexus-Restores": target.id},
            max_untracked_bytes=max_untracked_bytes,
        )
        current_tree = pre.tree
    planned = plan_changes(layout, current_tree, target.tree, paths)
    own = [c for c in planned if is_nexus_file(c.path, nexus_files) and not _named(c.path, paths)]
    planned = [c for c in planned if c not in own]
    writes = [c.path for c in planned if c.action != "delete" and not c.mode.startswith("160")]
    ignored = _ignored_existing(layout, writes)
    unheld = _unheld(layout.root, planned) - ignored
    changes: list[Change] = []
    skipped = [Change("skip", c.path, why=OWN_FILE) for c in own]
    for change in planned:
        if change.path in ignored:
            skipped.append(Change("skip", change.path, why="an ignored file is there now"))
        elif change.path in unheld:
            skipped.append(Change("skip", change.path, why=UNHELD))
        elif change.mode.startswith("160"):
            skipped.append(Change("skip", change.path, why="submodule: run git submodule update"))
        else:
            changes.append(change)
    if pre is None or not changes:
        if pre is not None:
            drop(layout, pre)  # nothing to undo: do not keep an identical checkpoint
        return RestoreResult(target, tuple(changes), dry_run, None, tuple(skipped))
    for change in changes:
        if change.action == "delete":
            _remove(layout.root, change.path)
    to_write: list[str] = []
    for change in changes:
        if change.action == "delete":
            continue
        why = _blocked(layout.root, change.path)
        if why:
            skipped.append(Change("skip", change.path, why=why))
        else:
            _remove_dir_if_empty(layout.root / change.path)
            to_write.append(change.path)
    if to_write:
        with temp_index(layout, seed=False) as env:
            run_git(layout.root, "read-tree", target.tree, env=env)
            run_git(
                layout.root,
                "checkout-index",
                "-f",
                "-z",
                "--stdin",
                env=env,
                input=join_z(to_write),
            )
    written = set(to_write)
    done = tuple(c for c in changes if c.action == "delete" or c.path in written)
    return RestoreResult(target, done, False, pre, tuple(skipped))


def is_nexus_file(path: str, nexus_files: Sequence[str]) -> bool:
    """True when `path` is inside one of `nexus_files` (folders, files or globs)."""
    specs = (posixpath.normpath(raw.strip().lstrip("/")) for raw in nexus_files)
    return any(path == s or path.startswith(s + "/") or fnmatch.fnmatchcase(path, s) for s in specs)


def _named(path: str, paths: Sequence[str]) -> bool:
    """True when a spec other than the whole tree covers `path` (the user asked for it)."""
    specs = (posixpath.normpath(raw) for raw in paths)
    return any(s != "." and (path == s or path.startswith(s + "/")) for s in specs)


def _remove_dir_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(path.lstat().st_mode):
            path.rmdir()
