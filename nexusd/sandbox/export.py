"""A snapshot's tree as the tar a sandbox's workspace is unpacked from: every file it holds.

`git archive` converts each file as a checkout would (line endings, `ident`,
`working-tree-encoding`, filters), but it also leaves out the paths that .gitattributes
marks `export-ignore`: a project that keeps `tests/ export-ignore` out of its release
tarballs had its checks run without its tests. Those paths are added back, converted as a
checkout of the tree converts them (`git checkout-index`). A checkpoint that holds the bytes
its files had on disk (`Nexus-Bytes: as-is`) is exported as stored: converting it again
would change them (a UTF-16 file encoded twice, a second `$Id`). A tree, not a commit, is
archived: `export-subst` has nothing to fill in and leaves files as they are.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from nexusd.checkpoint.convert import filter_driven, outside_attribute_files
from nexusd.checkpoint.model import AS_IS, BYTES_KEY, parse_trailers
from nexusd.checkpoint.snapshot import temp_index
from nexusd.errors import GitError
from nexusd.git import cat_blobs, is_attributes_file, join_z, run_git, split_z, try_git
from nexusd.paths import RepoLayout

GITLINK = "160000"
SYMLINK = "120000"
EXECUTABLE = "100755"
# The modes `git archive` writes (its default umask 002), so added entries look alike.
_FILE_MODE, _EXEC_MODE, _DIR_MODE = 0o664, 0o775, 0o775
_HINT = "check that the repository and the snapshot id are valid"


@dataclass(frozen=True)
class Entry:
    """One path of a tree: a blob (file or link) or a gitlink (submodule)."""

    mode: str
    oid: str
    path: str


def tree_tar(layout: RepoLayout, tree: str, *, as_is: bool = False) -> bytes:
    """The tree as an uncompressed tar (paths relative to the workspace), every path in it.

    `as_is`: the tree holds the bytes the files had on disk (an as-is checkpoint's)."""
    entries = list(tree_entries(layout, tree))
    if as_is:
        return _stored(layout, tree, entries)
    tar = run_git(layout.root, "archive", "--format=tar", tree, hint=_HINT)
    if not _attributes_mention(layout, entries, b"export-ignore"):
        return tar  # reading the names of a large tar back costs more than this check
    with tarfile.open(fileobj=io.BytesIO(tar)) as archived:
        have = {name.rstrip("/") for name in archived.getnames()}
    left_out = [entry for entry in entries if entry.path not in have]
    if not left_out:
        return tar
    out = io.BytesIO(tar)
    with tarfile.open(fileobj=out, mode="a", format=tarfile.PAX_FORMAT) as dst:
        _add(dst, layout, tree, left_out, have, converted=True)
    return out.getvalue()


def _attributes_mention(layout: RepoLayout, entries: list[Entry], word: bytes) -> bool:
    """Whether an attributes file git reads for the tree mentions `word`: its `.gitattributes`
    files, or one outside it (info/attributes, the user's, the system's)."""
    ids = [e.oid for e in entries if e.mode != GITLINK and is_attributes_file(e.path)]
    if any(word in text for text in cat_blobs(layout.root, ids)):
        return True
    for extra in outside_attribute_files(layout):
        with contextlib.suppress(OSError):
            if word in extra.read_bytes():
                return True
    return False


def stored_as_is(layout: RepoLayout, treeish: str) -> bool:
    """Whether `treeish` is a checkpoint commit holding its files' on-disk bytes."""
    raw = try_git(layout.root, "cat-file", "commit", treeish)
    if raw is None:
        return False  # a tree, or not a commit at all: git's own form
    message = raw.decode("utf-8", "replace").split("\n\n", 1)[-1]
    return parse_trailers(message).get(BYTES_KEY) == AS_IS


def tree_entries(layout: RepoLayout, tree: str) -> Iterator[Entry]:
    """Every blob and gitlink of `tree`, recursively, in git's order."""
    out = run_git(layout.root, "ls-tree", "-r", "-z", "--full-tree", tree, hint=_HINT)
    for line in split_z(out):
        meta, _, path = line.partition("\t")
        mode, kind, oid = meta.split()
        if kind in ("blob", "commit"):
            yield Entry(mode, oid, path)


def _stored(layout: RepoLayout, tree: str, entries: list[Entry]) -> bytes:
    # An as-is checkpoint keeps the files a filter driver owns (Git LFS) as git cleaned
    # them (`checkpoint/convert.py`): those are smudged, as a restore (`writeback`) does.
    owned = _filter_owned(layout, tree, [e for e in entries if e.mode not in (GITLINK, SYMLINK)])
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
        raw = [e for e in entries if e.path not in owned]
        _add(dst, layout, tree, raw, set(), converted=False)
        have = {p for e in raw for p in _parents(e.path)} | {e.path for e in raw}
        _add(dst, layout, tree, [e for e in entries if e.path in owned], have, converted=True)
    return out.getvalue()


def _filter_owned(layout: RepoLayout, tree: str, entries: list[Entry]) -> set[str]:
    """Paths of `entries` a filter driver owns by the tree's own attributes, as the snapshot
    and a restore decide it (`convert.filter_driven`)."""
    if not entries or not _attributes_mention(layout, entries, b"filter"):
        return set()
    with temp_index(layout, seed=False) as env:
        run_git(layout.root, "read-tree", tree, env=env, hint=_HINT)
        return filter_driven(layout, [e.path for e in entries], env)


def _add(
    dst: tarfile.TarFile,
    layout: RepoLayout,
    tree: str,
    entries: list[Entry],
    have: set[str],
    *,
    converted: bool,
) -> None:
    """Append `entries` (with any folder above them not in `have`), files converted for the
    working tree or as stored."""
    now = int(time.time())
    folders = {p for e in entries for p in _parents(e.path)} - have
    for folder in sorted(folders):
        dst.addfile(_info(folder, tarfile.DIRTYPE, _DIR_MODE, now))
    blobs = [e for e in entries if e.mode != GITLINK]
    links = [e for e in blobs if e.mode == SYMLINK]
    files = [e for e in blobs if e.mode != SYMLINK]
    for entry, data in _contents(layout, tree, links, filters=False):
        info = _info(entry.path, tarfile.SYMTYPE, 0o777, now)
        info.linkname = data.decode("utf-8", "surrogateescape")
        dst.addfile(info)
    for entry, data in _contents(layout, tree, files, filters=converted):
        mode = _EXEC_MODE if entry.mode == EXECUTABLE else _FILE_MODE
        info = _info(entry.path, tarfile.REGTYPE, mode, now)
        info.size = len(data)
        dst.addfile(info, io.BytesIO(data))
    for entry in entries:
        if entry.mode == GITLINK:  # as `git archive` has a submodule: an empty folder
            dst.addfile(_info(entry.path, tarfile.DIRTYPE, _DIR_MODE, now))


def _parents(path: str) -> Iterable[str]:
    parts = path.split("/")[:-1]
    return ("/".join(parts[: i + 1]) for i in range(len(parts)))


def _info(name: str, kind: bytes, mode: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, mtime
    return info


def _contents(
    layout: RepoLayout, tree: str, entries: list[Entry], *, filters: bool
) -> Iterator[tuple[Entry, bytes]]:
    """Each entry's bytes: as a checkout of `tree` writes them (`filters`), or as stored."""
    if not entries:
        return
    if filters:
        yield from _checked_out(layout, tree, entries)
        return
    out = cat_blobs(layout.root, [e.oid for e in entries])
    yield from zip(entries, out, strict=True)


def _checked_out(layout: RepoLayout, tree: str, entries: list[Entry]) -> list[tuple[Entry, bytes]]:
    """The entries as a checkout of `tree` writes them; in memory when there is room, and
    on disk when a large file (a Git LFS one, smudged) fills it."""
    from nexusd.sandbox.workspace import scratch_dir  # here: workspace imports this module

    memory = scratch_dir(0)
    try:
        return _check_out(layout, tree, entries, memory)
    except (GitError, OSError):
        if memory is None:
            raise
        return _check_out(layout, tree, entries, None)


def _check_out(
    layout: RepoLayout, tree: str, entries: list[Entry], folder: str | None
) -> list[tuple[Entry, bytes]]:
    # `git checkout-index` from a throw-away index of the tree converts each file with the
    # tree's own attributes, as a checkout does (`cat-file --batch --filters` would take
    # the working tree's, and git 2.39 prints the unconverted size in its headers).
    # checkout-index reads a working tree's `.gitattributes` before the index's (git's
    # default attribute direction): an empty work tree leaves only the tree's (and
    # $GIT_DIR/info/attributes, as `git archive` reads too). Files written to disk cost
    # about a second per thousand here, hence memory first.
    with tempfile.TemporaryDirectory(prefix="nexusd-export-", dir=folder) as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        run_git(layout.root, "read-tree", tree, env=env, hint=_HINT)
        empty = Path(scratch) / "worktree"
        empty.mkdir()
        prefix = f"--prefix={scratch}/files/"
        paths = join_z(e.path for e in entries)
        run_git(
            empty,
            f"--git-dir={layout.git_dir}",
            f"--work-tree={empty}",
            "checkout-index",
            prefix,
            "-z",
            "--stdin",
            env=env,
            input=paths,
            hint=_HINT,
        )
        return [(entry, (Path(scratch) / "files" / entry.path).read_bytes()) for entry in entries]
