"""Restore a checkpoint into the working tree, safely and undoably.

Only the working tree changes: HEAD and the index stay as they are, so after a
restore `git status` shows the difference as unstaged changes. A `pre-restore`
checkpoint of the current state is taken first; every file the restore removes
or overwrites is in it, and one changed after that snapshot read it is left as it
is (`guards`). Ignored files are never touched: neither those ignored now nor those
the checkpoint's own `.gitignore` files ignore.

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

from nexusd.checkpoint.guards import (
    FILE_MODES,
    blocked,
    changed_since,
    disk_kind,
    ignored_deletions,
    ignored_existing,
    missing_objects,
    restoring,
    unheld,
)
from nexusd.checkpoint.hidden import hidden_entries
from nexusd.checkpoint.listing import drop, resolve
from nexusd.checkpoint.model import Checkpoint
from nexusd.checkpoint.snapshot import (
    MAX_UNTRACKED_BYTES,
    create_checkpoint,
    repo_state,
    snapshot_tree,
)
from nexusd.checkpoint.writeback import write_files
from nexusd.errors import GitError, NexusError
from nexusd.git import run_git, split_z
from nexusd.paths import RepoLayout

_KIND = {"A": "add", "M": "modify", "T": "modify", "D": "delete"}
# The defaults of `watch.paths` and `memory.sources`; the CLI passes the configured ones.
NEXUS_FILES = (".scratchpad_logs", ".scratchpad", "MEMORY.md", "memory/daily/*.md")
OWN_FILE = "nexusd's own file; name it in the paths to restore it"
UNHELD = "a file no checkpoint holds is there now (kept)"
CHANGED = "changed since the snapshot, left as it is"
NESTED = "a submodule / nested repository"


@dataclass(frozen=True)
class Change:
    """One path the restore would write or remove (`old_*`: the current snapshot's entry)."""

    action: str  # add | modify | delete | skip
    path: str
    mode: str = ""
    why: str = ""
    old_mode: str = ""
    old_oid: str = ""
    oid: str = ""  # the checkpoint's blob (add and modify)

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
        # The paths are names, not patterns: `a[1].txt` must not also restore `a1.txt`.
        "--literal-pathspecs",
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
        old_mode, new_mode, old_oid, new_oid, letter = meta.lstrip(":").split()
        kind = _KIND.get(letter[0], "modify")
        changes.append(
            Change(kind, path, new_mode, old_mode=old_mode, old_oid=old_oid, oid=new_oid)
        )
    return changes


def check_paths(layout: RepoLayout, target: Checkpoint, paths: Sequence[str]) -> list[str]:
    """`paths` normalised; refused when outside the repository or in neither `target` nor
    the working tree (a typo would otherwise restore nothing, silently)."""
    specs: list[str] = []
    for raw in paths:
        spec = posixpath.normpath(raw.replace(os.sep, "/"))
        if spec == ".." or spec.startswith("../") or posixpath.isabs(spec):
            raise NexusError(
                f"{raw!r} is outside the repository at {layout.root}",
                hint="name files or folders inside the repository",
            )
        specs.append(spec)
    named = [s for s in specs if s != "."]
    if not named:
        return specs
    listed = run_git(
        layout.root,
        "--literal-pathspecs",
        "ls-tree",
        "-r",
        "-z",
        "--name-only",
        "--full-tree",
        target.tree,
        "--",
        *named,
    )
    held = split_z(listed)
    missing = [
        s
        for s in named
        if not os.path.lexists(layout.root / s)
        and not any(h == s or h.startswith(s + "/") for h in held)
    ]
    if missing:
        raise NexusError(
            f"not in checkpoint {target.id} nor in the working tree: "
            + ", ".join(repr(m) for m in missing),
            hint="check the spelling (shown relative to the repository root; the command line"
            " reads paths from the current folder, or from -C's);"
            f" `git ls-tree -r --name-only {target.commit[:12]}` lists the checkpoint's files",
        )
    return specs


def _sort_out(
    layout: RepoLayout,
    planned: list[Change],
    target_tree: str,
    paths: Sequence[str],
    nexus_files: Sequence[str],
) -> tuple[list[Change], list[Change]]:
    """(changes to make, changes skipped with why) of a plan."""
    own = {
        c.path for c in planned if is_nexus_file(c.path, nexus_files) and not _named(c.path, paths)
    }
    rest = [c for c in planned if c.path not in own]
    writes = [c.path for c in rest if c.action != "delete" and not c.mode.startswith("160")]
    ignored = ignored_existing(layout, writes)
    unheld_now = unheld(layout.root, [c.path for c in rest if c.action == "add"]) - ignored
    deletes = [c.path for c in rest if c.action == "delete" and c.old_mode in FILE_MODES]
    kept_ignored = ignored_deletions(layout, target_tree, deletes)
    # A sparse checkout's skip-worktree files not on disk: neither written nor "deleted".
    sparse = set(hidden_entries(layout).absent)
    changes: list[Change] = []
    skipped = [Change("skip", c.path, why=OWN_FILE) for c in planned if c.path in own]
    for change in rest:
        why = ""
        if change.path in sparse:
            why = "not checked out here (skip-worktree)"
        elif change.mode.startswith("160"):
            why = "submodule: run git submodule update"
        elif change.old_mode.startswith("160"):
            why = NESTED
        elif change.path in ignored:
            why = "an ignored file is there now"
        elif change.path in unheld_now:
            why = UNHELD
        elif change.path in kept_ignored:
            why = "an ignored file, left as it is"
        if why:
            skipped.append(Change("skip", change.path, why=why))
        else:
            changes.append(change)
    return changes, skipped


def _remove(root: Path, rel: str) -> bool:
    """Remove the file or link at `rel` and the folders it empties; False when a non-empty
    folder is there (a nested repository, say), which is left as it is."""
    path = root / rel
    try:
        if stat.S_ISDIR(path.lstat().st_mode):
            path.rmdir()
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    parent = path.parent
    while parent != root:
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent
    return True


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
    specs = check_paths(layout, target, paths)
    # A dry run writes nothing, so it needs no lock; a restore holds it from its snapshot on.
    lock = contextlib.nullcontext() if dry_run else restoring(layout)
    with lock:
        return _restore(
            layout,
            target,
            specs,
            dry_run=dry_run,
            max_untracked_bytes=max_untracked_bytes,
            nexus_files=nexus_files,
        )


def _restore(
    layout: RepoLayout,
    target: Checkpoint,
    specs: list[str],
    *,
    dry_run: bool,
    max_untracked_bytes: int,
    nexus_files: Sequence[str],
) -> RestoreResult:
    pre: Checkpoint | None = None
    # An older checkpoint holds git's cleaned blobs: against the disk's bytes every file git
    # converts would differ, and be rewritten converted, so it is compared with the cleaned
    # tree. That is taken before the pre-restore checkpoint: a file edited in between then
    # differs from its planned blob and is left as it is (`changed_since`).
    cleaned = (
        None
        if target.as_is
        else snapshot_tree(layout, max_untracked_bytes=max_untracked_bytes, as_is=False)
    )
    if dry_run:
        current_tree = cleaned or snapshot_tree(layout, max_untracked_bytes=max_untracked_bytes)
    else:
        # The plan is computed from the pre-restore checkpoint itself (or from the cleaned
        # tree taken just before it), so everything the restore removes or overwrites is in it.
        pre = create_checkpoint(
            layout,
            reason="pre-restore",
            message=f"before restoring {target.id}",
            trailers={"Nexus-Restores": target.id},
            max_untracked_bytes=max_untracked_bytes,
        )
        current_tree = cleaned or pre.tree
    try:
        try:
            planned = plan_changes(layout, current_tree, target.tree, specs)
        except GitError as exc:
            raise _damaged(target, f"its files cannot be listed ({exc.message})") from exc
        changes, skipped = _sort_out(layout, planned, target.tree, specs, nexus_files)
        _check_objects(layout, target, changes)
        if pre is not None and changes:
            # Last look before writing: an edit saved after the snapshot read the file is in
            # no checkpoint, so that path is left as it is now.
            held = [(c.path, c.old_mode, c.old_oid) for c in changes if c.old_mode in FILE_MODES]
            moved = changed_since(layout, held)
            skipped += [Change("skip", c.path, why=CHANGED) for c in changes if c.path in moved]
            changes = [c for c in changes if c.path not in moved]
    except BaseException:
        if pre is not None:
            drop(layout, pre)  # nothing was written: no restore to undo
        raise
    if pre is None or not changes:
        if pre is not None:
            drop(layout, pre)  # nothing to undo: do not keep an identical checkpoint
        return RestoreResult(target, tuple(changes), dry_run, None, tuple(skipped))
    try:
        done = _apply(layout, target, changes, skipped)
    except (GitError, OSError) as exc:
        raise GitError(
            f"the restore of {target.id} stopped part way: {getattr(exc, 'message', exc)}",
            hint=f"undo what it changed with `{pre.restore_command}`",
        ) from exc
    if not done:
        drop(layout, pre)  # everything was left alone at the last moment: nothing to undo
        pre = None
    return RestoreResult(target, done, False, pre, tuple(skipped))


def _check_objects(layout: RepoLayout, target: Checkpoint, changes: Sequence[Change]) -> None:
    """Refuse, before anything is written, a checkpoint whose files git cannot read."""
    wanted: dict[str, list[str]] = {}  # one blob may be several identical files
    for c in changes:
        if c.action != "delete" and c.mode in FILE_MODES:
            wanted.setdefault(c.oid, []).append(c.path)
    gone = sorted(p for oid in missing_objects(layout, list(wanted)) for p in wanted[oid])
    if gone:
        shown = ", ".join(repr(p) for p in gone[:3]) + (" …" if len(gone) > 3 else "")
        raise _damaged(target, f"{len(gone)} of its files are missing from git ({shown})")


def _damaged(target: Checkpoint, why: str) -> GitError:
    return GitError(
        f"checkpoint {target.id} is damaged: {why}; nothing was changed",
        hint="`git fsck` names what is missing; name its other files to restore just them,"
        f" or drop it with `nexusd checkpoint drop {target.id}`",
    )


def _apply(
    layout: RepoLayout, target: Checkpoint, changes: list[Change], skipped: list[Change]
) -> tuple[Change, ...]:
    """Remove, then write, what `changes` says; return what was done (adds to `skipped`)."""
    removed: set[str] = set()
    for change in changes:
        if change.action != "delete":
            continue
        if _remove(layout.root, change.path):
            removed.add(change.path)
        else:
            skipped.append(Change("skip", change.path, why="a folder is there now, left as it is"))
    to_write: list[str] = []
    for change in changes:
        if change.action == "delete":
            continue
        why = blocked(layout.root, change.path)
        if change.action == "add" and disk_kind(layout.root, change.path) in ("file", "link"):
            why = UNHELD  # created since the plan was made: in no checkpoint
        if why:
            skipped.append(Change("skip", change.path, why=why))
        else:
            _remove_dir_if_empty(layout.root / change.path)
            to_write.append(change.path)
    if to_write:
        chosen = set(to_write)
        write_files(layout, target, [(c.path, c.mode, c.oid) for c in changes if c.path in chosen])
    done = removed | set(to_write)
    return tuple(c for c in changes if c.path in done)


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
