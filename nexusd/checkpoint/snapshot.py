"""Snapshot the working tree into `refs/nexus/checkpoints/<id>` without touching anything else.

The snapshot is built in a temporary index seeded from a copy of the real index, so
`git add -A` reuses its stat cache (unchanged files are not re-hashed) and the real
index, its lock, HEAD, the stash and every reflog stay untouched. The commit and its
ref are written by `objects` (what `git commit-tree` and `git update-ref` would write,
without their process start-up), or by those commands in SHA-256/reftable repositories.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nexusd.atomic import new_file
from nexusd.checkpoint.convert import (
    Plan,
    keep_bytes,
    plan,
    settings_later,
)
from nexusd.checkpoint.disk_listings import listings_later
from nexusd.checkpoint.hidden import is_sparse, reveal
from nexusd.checkpoint.model import (
    AS_IS,
    BYTES_KEY,
    REASONS,
    REF_PREFIX,
    Checkpoint,
    format_message,
    make_id,
)
from nexusd.checkpoint.objects import create_ref, read_head, write_commit
from nexusd.checkpoint.shared import scratch_dir
from nexusd.errors import GitError
from nexusd.git import (
    IDENTITY,
    git_text,
    is_attributes_file,
    join_z,
    run_git,
    split_z,
    try_git_text,
)
from nexusd.paths import RepoLayout

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# Default for `checkpoint.max_untracked_file_bytes`: 0 snapshots untracked files of any size.
MAX_UNTRACKED_BYTES = 50 * 1024 * 1024

# How often a snapshot is retried when files vanish under it (each retry leaves them out).
VANISHED_ATTEMPTS = 25
# git add's messages naming a file that disappeared between its directory walk and reading it
# (a pattern, not compiled here: only a failed snapshot needs it).
_VANISHED = r"""unable to stat '([^']+)'|open\("([^"]+)"\): No such file"""

# Files in a worktree's git dir that mean an operation is half done.
IN_PROGRESS = (
    ("MERGE_HEAD", "merge"),
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
)


@dataclass(frozen=True)
class RepoState:
    """HEAD, branch and any half-done operation of one worktree."""

    head: str | None
    branch: str | None
    operation: str | None


def repo_state(layout: RepoLayout) -> RepoState:
    """Read HEAD (None when unborn), the branch (None when detached) and a merge/rebase."""
    known, head = read_head(layout)
    if not known:
        head = try_git_text(layout.root, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    branch: str | None = None
    with contextlib.suppress(OSError):
        text = (layout.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if text.startswith("ref: refs/heads/"):
            branch = text.removeprefix("ref: refs/heads/")
    operation = next((name for f, name in IN_PROGRESS if (layout.git_dir / f).exists()), None)
    return RepoState(head=head or None, branch=branch, operation=operation)


@contextlib.contextmanager
def temp_index(layout: RepoLayout, *, seed: bool = True) -> Iterator[dict[str, str]]:
    """Yield the env for a private index file, a copy of the real one when `seed`."""
    tmp_dir = scratch_dir(layout)  # group-writable in a shared repository, like git's folders
    fd, path = new_file(tmp_dir, ".index-", ".tmp")
    try:
        real = layout.git_dir / "index"
        try:
            if seed and real.exists():
                # Keeping the index mtime makes git's racy-clean checks behave exactly as on
                # the real index; the copy is taken without index.lock (git replaces index
                # atomically).
                copy_with_times(real, fd, path)
            else:
                path.unlink()
        finally:
            os.close(fd)
        yield {"GIT_INDEX_FILE": str(path)}
    finally:
        for leftover in (path, path.with_name(path.name + ".lock")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def snapshot_tree(
    layout: RepoLayout, *, max_untracked_bytes: int = MAX_UNTRACKED_BYTES, as_is: bool = True
) -> str:
    """Write the tree of the working tree (tracked + untracked, not ignored); return its id."""
    return build_tree_report(layout, max_untracked_bytes, as_is=as_is).tree


NESTED_WHY = "a nested repository with no commit"


@dataclass(frozen=True)
class TreeReport:
    """A snapshot's tree and the paths it left out, each kind on its own."""

    tree: str
    big: list[str]  # untracked files over the size limit
    vanished: list[str]  # files deleted between git listing them and reading them
    nested: list[str]  # nested repositories with no commit checked out (git cannot add them)

    def left_out(self, limit: int) -> tuple[tuple[str, str], ...]:
        """(path, why) of every path the snapshot does not hold, in the order found."""
        return (
            *((p, f"untracked, over {limit} bytes") for p in self.big),
            *((p, NESTED_WHY) for p in self.nested),
            *((p, "deleted while the snapshot was taken") for p in self.vanished),
        )


def _untracked_left_out(
    layout: RepoLayout, env: dict[str, str], limit: int
) -> tuple[list[str], list[str], list[str]]:
    """(untracked files over `limit` bytes, nested repositories without a commit, every
    untracked path)."""
    untracked = split_z(run_git(layout.root, "ls-files", "-z", "-o", "--exclude-standard", env=env))
    big: list[str] = []
    nested: list[str] = []
    for rel in untracked:
        if rel.endswith("/"):
            # git lists a nested repository as `dir/`; `git add` dies on one with no commit
            # ("does not have a commit checked out"), so it is left out like an oversized file.
            if not _has_commit(layout.root / rel):
                nested.append(rel.rstrip("/"))
            continue
        if not limit:
            continue
        with contextlib.suppress(OSError):
            st = (layout.root / rel).lstat()
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                big.append(rel)
    return big, nested, untracked


def _has_commit(repo: Path) -> bool:
    try:
        return bool(try_git_text(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}"))
    except OSError:
        return True  # gone since it was listed: nothing for `git add` to fail on


def build_tree(layout: RepoLayout, max_untracked_bytes: int) -> tuple[str, list[str]]:
    """(tree id, untracked files left out for being larger than `max_untracked_bytes`)."""
    report = build_tree_report(layout, max_untracked_bytes)
    return report.tree, report.big


def build_tree_report(
    layout: RepoLayout, max_untracked_bytes: int, *, as_is: bool = True
) -> TreeReport:
    """The tree of the working tree and what it leaves out (see TreeReport); without
    `as_is`, git's cleaned tree (what `git add` stores), as made before `Nexus-Bytes`."""
    with (
        temp_index(layout) as env,
        settings_later(layout, wanted=as_is) as settings,
        listings_later(layout, env) as listings,
    ):
        # assume-unchanged/skip-worktree files are read like any other (the real index keeps
        # its bits); skip-worktree ones a sparse checkout left off the disk stay as indexed.
        hidden = reveal(layout, env)
        sparse = is_sparse(layout, hidden)
        # The files git converts keep their bytes (`convert`): the tracked attribute files
        # start the listings they need now, to run beside `ls-files -o` and `add`.
        if as_is:
            listings.start(plan(layout, {}, hidden.attributes))
        # Untracked files over the limit (datasets, build outputs nobody ignored) stay out of
        # every snapshot, so restores never touch them and the object store does not balloon.
        big, nested, untracked = _untracked_left_out(layout, env, max_untracked_bytes)
        how = Plan()  # git's cleaned tree: nothing read as it is
        if as_is:
            attributes = [*hidden.attributes, *filter(is_attributes_file, untracked)]
            how = plan(layout, settings(), attributes)
            listings.start(how)  # what the settings and untracked attribute files add
        read: list[str] | None = None
        vanished: list[str] = []
        for _attempt in range(VANISHED_ATTEMPTS):
            try:
                _add_all(layout, env, [*big, *nested, *vanished], sparse=sparse)
            except GitError as exc:
                gone = _vanished_paths(layout, str(exc))
                if gone is None:
                    raise
                # A file deleted between git listing it and reading it (a temp file, a build
                # output): git dies on it; leave it out, as it is gone, and try again.
                vanished.extend(p for p in gone if p not in vanished)
                continue
            if vanished:
                # `add` skipped them, so a tracked one would keep the entry the snapshot's
                # index was seeded with: its checkpoint would bring a deleted file back.
                run_git(
                    layout.root,
                    "update-index",
                    "--force-remove",
                    "-z",
                    "--stdin",
                    env=env,
                    input=join_z(vanished),
                )
            keep = how.clean
            if keep and read is None:
                # Not the untracked files the snapshot leaves out: reading a data file of
                # gigabytes for a CRLF on every snapshot, to drop it anyway, costs seconds.
                skip = {*big, *nested}
                kept = (p for p in untracked if p not in skip and not p.endswith("/"))
                read = [*listings.paths(how), *kept]
            gone = keep_bytes(layout, env, how, read or [], hidden.absent) if keep else []
            if gone:
                vanished.extend(p for p in gone if p not in vanished)
                continue
            tree = git_text(layout.root, "write-tree", env=env)
            return TreeReport(tree, big, vanished, nested)
    raise GitError(
        f"files kept vanishing while the working tree was snapshotted ({len(vanished)} so far)",
        hint="something is creating and deleting files very fast; retry when it is quieter,"
        " or ignore those files in .gitignore",
    )


def _add_all(layout: RepoLayout, env: dict[str, str], excluded: list[str], *, sparse: bool) -> None:
    specs = [":/", *(f":(top,literal,exclude){p}" for p in excluded)]
    run_git(
        layout.root,
        "-c",
        "advice.addEmbeddedRepo=false",
        "-c",
        "advice.updateSparsePath=false",
        "-c",
        "core.safecrlf=false",
        "add",
        "-A",
        # Without it, add skips (and fails on) files outside the sparse-checkout cone.
        *(["--sparse"] if sparse else []),
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
        env=env,
        input=join_z(specs),
    )


def _vanished_paths(layout: RepoLayout, message: str) -> list[str] | None:
    """The paths git could not stat or open because they are gone; None for other failures."""
    named = re.findall(_VANISHED, message)
    if not named:
        return None
    # One that is back already is simply read on the next attempt.
    return [p for p in (a or b for a, b in named) if not os.path.lexists(layout.root / p)]


def _normalize_trailers(trailers: Mapping[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (trailers or {}).items():
        name = key if key.startswith("Nexus-") else "Nexus-" + key.replace("_", "-").title()
        out[name] = str(value)
    return out


def create_checkpoint(
    layout: RepoLayout,
    *,
    reason: str,
    message: str | None = None,
    trailers: Mapping[str, str] | None = None,
    now: datetime | None = None,
    max_untracked_bytes: int = MAX_UNTRACKED_BYTES,
) -> Checkpoint:
    """Snapshot the working tree as a new checkpoint; HEAD, index and stash are untouched."""
    if reason not in REASONS:
        raise GitError(
            f"unknown checkpoint reason {reason!r}",
            hint="use one of: " + ", ".join(sorted(REASONS)),
        )
    bad = next((c for c in message or "" if ord(c) < 32 and c not in "\t\n\r"), None)
    if bad is not None:  # a NUL is what `git fsck` flags (nulInCommit); the rest garbles logs
        raise GitError(
            f"the message holds a control character (U+{ord(bad):04X}); nothing was created",
            hint="remove it; tabs and newlines are fine",
        )
    state = repo_state(layout)
    report = build_tree_report(layout, max_untracked_bytes)
    tree, big, vanished = report.tree, report.big, report.vanished
    extra = _normalize_trailers(trailers)
    info: dict[str, str] = {"Nexus-Reason": reason}
    for key in ("Nexus-Cycle", "Nexus-Request"):
        if key in extra:
            info[key] = extra.pop(key)
    info["Nexus-Branch"] = state.branch or "(detached)"
    info["Nexus-Head"] = state.head or "(unborn)"
    if state.operation:
        # A snapshot in the middle of a merge/rebase is allowed but flagged.
        info["Nexus-State"] = state.operation
    info[BYTES_KEY] = AS_IS
    if big:
        info["Nexus-Skipped"] = f"{len(big)} untracked file(s) over {max_untracked_bytes} bytes"
    if report.nested:
        info["Nexus-Skipped-Repos"] = f"{len(report.nested)} nested repository(ies) with no commit"
    if vanished:
        info["Nexus-Vanished"] = f"{len(vanished)} file(s) deleted while the snapshot was taken"
    info.update(extra)
    subject = message.strip().splitlines()[0] if message and message.strip() else ""
    subject = subject or f"nexusd checkpoint ({reason})"
    body = "\n".join(message.strip().splitlines()[1:]) if message else None
    when = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = f"{int(when.timestamp())} +0000"
    env = {**IDENTITY, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    args = ["commit-tree", "--no-gpg-sign", tree, *(["-p", state.head] if state.head else [])]
    for bump in range(64):
        cid = make_id(when, bump)
        # The id in the message makes every checkpoint its own commit (notes attach to commits).
        text = format_message(subject, {**info, "Nexus-Id": cid}, body)
        commit = (
            _commit(layout, tree, state.head, stamp, text)
            or run_git(layout.root, *args, "-F", "-", env=env, input=text.encode("utf-8"))
            .decode()
            .strip()
        )
        if _create_ref(layout, REF_PREFIX + cid, commit):
            return Checkpoint(
                id=cid,
                commit=commit,
                tree=tree,
                created_at=when,
                reason=reason,
                parent=state.head,
                subject=subject,
                trailers={**info, "Nexus-Id": cid},
                left_out=report.left_out(max_untracked_bytes),
            )
    raise GitError("could not allocate a checkpoint id", hint="retry in a moment")


def _commit(layout: RepoLayout, tree: str, parent: str | None, stamp: str, text: str) -> str:
    ident = f"{IDENTITY['GIT_COMMITTER_NAME']} <{IDENTITY['GIT_COMMITTER_EMAIL']}> {stamp}"
    lines = [f"tree {tree}", *([f"parent {parent}"] if parent else [])]
    lines += [f"author {ident}", f"committer {ident}", "", text]
    return write_commit(layout, "\n".join(lines).encode("utf-8")) or ""


def _create_ref(layout: RepoLayout, ref: str, commit: str) -> bool:
    fast = create_ref(layout, ref, commit)
    if fast is not None:
        return fast
    try:
        run_git(layout.root, "update-ref", "--no-deref", ref, commit, "")
    except GitError:
        if try_git_text(layout.root, "rev-parse", "-q", "--verify", ref):
            return False
        raise
    return True


def copy_with_times(source: Path, fd: int, target: Path) -> None:
    """Copy `source` into the open `fd` of `target`, which takes the source's times; both
    from one open file, so the times belong to the bytes copied even if `source` is
    replaced meanwhile."""
    with source.open("rb") as src:
        st = os.fstat(src.fileno())
        while chunk := src.read(1 << 20):
            os.write(fd, chunk)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
