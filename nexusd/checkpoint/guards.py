"""What a restore must leave alone: files no snapshot holds, and files changed under it.

Every check here answers "would writing or removing this path lose something that is in
no checkpoint?"; the restore skips (and reports) each path for which the answer is yes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from nexusd.checkpoint.convert import c_quote
from nexusd.checkpoint.shared import make_dir, open_shared, scratch_dir
from nexusd.errors import NexusError
from nexusd.git import cat_blobs, join_z, object_kinds, run_git, split_z
from nexusd.paths import RepoLayout

# Tree modes of entries that are files on disk (a gitlink is a folder, handled apart).
FILE_MODES = frozenset({"100644", "100755", "120000"})


def blocked(root: Path, rel: str) -> str:
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


def ignored_existing(layout: RepoLayout, paths: list[str]) -> set[str]:
    """Which of `paths` exist now as ignored files (never overwritten)."""
    existing = [p for p in paths if os.path.lexists(layout.root / p)]
    if not existing:
        return set()
    out = run_git(layout.root, "check-ignore", "-z", "--stdin", input=join_z(existing), check=False)
    return set(split_z(out))


def unheld(root: Path, added: Sequence[str]) -> set[str]:
    """Paths the restore would add where a file exists that the current snapshot lacks.

    An untracked file over the size limit is left out of every snapshot, the pre-restore
    one too (as is one created since): writing the checkpoint's version over it would
    destroy work that nothing can bring back.
    """
    return {p for p in added if disk_kind(root, p) in ("file", "link")}


def disk_kind(root: Path, rel: str) -> str | None:
    """`file`, `link` or `dir` at `rel`; None when absent or under something not a folder.

    A path under a file or a symbolic link holds nothing of the repository's there: `lstat`
    of `link/a` would follow the link, out of the repository or round a loop (ELOOP).
    """
    path = root
    *folders, name = rel.split("/")
    try:
        for part in folders:
            path = path / part
            if not stat.S_ISDIR(path.lstat().st_mode):
                return None
        mode = (path / name).lstat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    return "link" if stat.S_ISLNK(mode) else "file"


def changed_since(layout: RepoLayout, held: Sequence[tuple[str, str, str]]) -> set[str]:
    """Which of `held` (path, mode, blob id in the pre-restore snapshot) the disk no longer
    matches: edited, replaced or removed since the snapshot read it (a restore overwriting
    them would lose what nothing holds). A file matches when its bytes are the blob (the
    snapshot held them as they were) or when `git add` would store that blob (a file a
    filter driver owns, or one the snapshot held as staged).
    """
    changed: set[str] = set()
    files: list[tuple[str, str]] = []
    for path, mode, oid in held:
        kind = disk_kind(layout.root, path)
        if mode == "120000":
            if kind != "link" or _link_oid(layout.root / path, len(oid)) != oid:
                changed.add(path)
        elif kind != "file":
            changed.add(path)
        else:
            files.append((path, oid))
    for filters in (False, True):
        if not files:
            break
        hashes = _hashes(layout, [p for p, _ in files], filters=filters)
        # A file git could not read (gone meanwhile) ends the output early: changed too.
        files = [(p, oid) for i, (p, oid) in enumerate(files) if hashes[i : i + 1] != [oid]]
    changed.update(p for p, _ in files)
    return changed


def _hashes(layout: RepoLayout, paths: Sequence[str], *, filters: bool) -> list[str]:
    """The blob ids of `paths` on disk: their bytes, or with `filters` what `git add` stores
    (--stdin-paths applies each path's attributes, clean filters and line endings)."""
    out = run_git(
        layout.root,
        "-c",
        "core.safecrlf=false",
        "hash-object",
        *([] if filters else ["--no-filters"]),
        "--stdin-paths",
        input=b"".join(c_quote(p) + b"\n" for p in paths),
        check=False,
    )
    return out.decode("ascii", "replace").split()


def missing_objects(layout: RepoLayout, oids: Sequence[str]) -> set[str]:
    """Which of `oids` the object store lacks (a pruned or half-copied repository): a
    restore must find that out before it writes anything, not half way through."""
    return {oid for oid, kind in object_kinds(layout.root, oids).items() if kind == "missing"}


def _link_oid(path: Path, width: int) -> str:
    """The blob id git gives a symbolic link: its target, hashed as a blob."""
    try:
        target = os.fsencode(path.readlink())
    except OSError:
        return ""
    algo = hashlib.sha1 if width == 40 else hashlib.sha256
    return algo(b"blob %d\0" % len(target) + target).hexdigest()


def ignored_deletions(layout: RepoLayout, target_tree: str, paths: Sequence[str]) -> set[str]:
    """Which of `paths` (files the restore would delete) are untracked and ignored, by the
    rules of the working tree now or by those of `target_tree`'s `.gitignore` files.

    Such a file was snapshotted only because the rules that ignore it were missing then
    (a restore removed `.gitignore`); the checkpoint brings the rules back, and ignored
    files are never touched.
    """
    if not paths:
        return set()
    # The whole index in one pass: cheaper than thousands of pathspecs matched per entry.
    tracked = set(split_z(run_git(layout.root, "ls-files", "-z")))
    candidates = [p for p in paths if p not in tracked]
    if not candidates:
        return set()
    found = _check_ignore(layout.root, candidates, {})
    rest = [p for p in candidates if p not in found]
    return found | (_target_ignores(layout, target_tree, rest) if rest else set())


def _check_ignore(work: Path, paths: list[str], env: dict[str, str]) -> set[str]:
    # --no-index: whether a path is tracked must not decide; the caller already did.
    out = run_git(
        work,
        "check-ignore",
        "--no-index",
        "-z",
        "--stdin",
        env=env,
        input=join_z(paths),
        check=False,
    )
    return set(split_z(out))


def _target_ignores(layout: RepoLayout, tree: str, paths: list[str]) -> set[str]:
    """Ask git with a scratch work tree holding only `tree`'s `.gitignore` files, so a dry
    run answers like the real one and nothing is written into the working tree. Limit: a
    `dir/` pattern is matched against leading folders only (the candidates are files)."""
    listing = split_z(run_git(layout.root, "ls-tree", "-r", "-z", "--full-tree", tree))
    rules: list[tuple[str, str]] = []
    for item in listing:
        meta, _, path = item.partition("\t")
        mode, _kind, oid = meta.split()
        # git reads no .gitignore that is a symbolic link.
        if mode in ("100644", "100755") and path.rsplit("/", 1)[-1] == ".gitignore":
            rules.append((path, oid))
    if not rules:
        return set()
    with tempfile.TemporaryDirectory(dir=scratch_dir(layout), prefix="ignores-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        contents = cat_blobs(layout.root, (oid for _, oid in rules))
        for (path, _oid), data in zip(rules, contents, strict=True):
            dest = work / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        env = {
            "GIT_DIR": str(layout.git_dir),
            "GIT_WORK_TREE": str(work),
            # No index at all: the real one's skip-worktree .gitignore entries are no rules
            # of the target's.
            "GIT_INDEX_FILE": str(Path(tmp) / "index"),
        }
        return _check_ignore(work, paths, env)


@contextlib.contextmanager
def restoring(layout: RepoLayout) -> Iterator[None]:
    """Hold the working tree's restore lock: two restores at once each snapshot the other's
    half-written tree and leave a mix of both checkpoints."""
    make_dir(layout, layout.nexus_dir)
    # Shared with the group in a shared repository: another member's restore takes it too.
    fd = open_shared(layout, layout.nexus_dir / "restore.lock", os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise NexusError(
                "another restore is running in this working tree; nothing was changed",
                hint="wait for it to finish, then run this restore again",
            ) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock
