"""Export an exact snapshot (a git tree) into a sandbox's workspace; never touch live files.

The working tree is snapshotted the way checkpoints are (`checkpoint/snapshot.py`: a
temporary index, the size cap for untracked files), so the user's index and files stay as
they were. Its tree is git's cleaned one, not a checkpoint's as-is tree: the export
(`export.tree_tar`) converts each file for the working tree as a checkout does (line
endings, `ident`, `working-tree-encoding`); an as-is checkpoint's tree is exported as stored.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

from nexusd.checkpoint.snapshot import MAX_UNTRACKED_BYTES, build_tree_report, snapshot_tree
from nexusd.errors import GitError
from nexusd.git import split_z, try_git, try_git_text
from nexusd.paths import RepoLayout
from nexusd.processes import pid_alive
from nexusd.sandbox.export import tree_tar

log = logging.getLogger("nexusd.sandbox")

SANDBOX_UID = 65534  # "nobody" on Debian: owns nothing on the host.
# Workspaces go to memory when it has room: creating a file on a disk filesystem costs
# ~1 ms here (1,000 files: 0.9 s of `tar -x`), on tmpfs ~15 us. Room means the tree
# several times over (for what the check writes) and never below this much.
SHM = Path("/dev/shm")
SHM_HEADROOM = 4
SHM_MIN_FREE = 512 * 1024**2


def resolve_tree(
    layout: RepoLayout, treeish: str | None, *, max_untracked_bytes: int = MAX_UNTRACKED_BYTES
) -> str:
    """The tree id of a commit/tree/ref, or of the working tree when `treeish` is None (the
    checkpoints' snapshot: untracked files over `max_untracked_bytes` left out)."""
    if treeish is None:
        return snapshot_tree(layout, max_untracked_bytes=max_untracked_bytes, as_is=False)
    tree = try_git_text(layout.root, "rev-parse", "--verify", "--quiet", f"{treeish}^{{tree}}")
    if tree is None:
        raise GitError(
            f"{treeish!r} is not a commit or tree in {layout.root}",
            hint="pass a checkpoint id (`nexusd checkpoint list`) or a commit sha",
        )
    return tree


# Paths named in a result's warning about what its snapshot left out, at most.
LEFT_OUT_NAMED = 5


def resolve_snapshot(
    layout: RepoLayout, treeish: str | None, *, max_untracked_bytes: int = MAX_UNTRACKED_BYTES
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(tree id, (path, why) of each path of the working tree the check will not see).

    A check's result must say when its workspace is not the working tree: an untracked
    file over the size limit, a nested repository, or a submodule (its commit is in the
    tree, its files are not: `git archive` leaves an empty folder)."""
    left_out: tuple[tuple[str, str], ...] = ()
    if treeish is None:
        report = build_tree_report(layout, max_untracked_bytes, as_is=False)
        tree, left_out = report.tree, report.left_out(max_untracked_bytes)
    else:
        tree = resolve_tree(layout, treeish)
    return tree, (*left_out, *((p, SUBMODULE_WHY) for p in submodules(layout, tree)))


SUBMODULE_WHY = "a submodule or nested repository: its files are not in the snapshot"


def submodules(layout: RepoLayout, tree: str) -> list[str]:
    """Paths of the gitlinks (submodules, nested repositories) in `tree`."""
    out = try_git(layout.root, "ls-tree", "-r", "-z", "--full-tree", tree) or b""
    return [entry.split("\t", 1)[1] for entry in split_z(out) if entry.startswith("160000 ")]


def left_out_warning(left_out: tuple[tuple[str, str], ...]) -> str:
    """One warning for a result whose snapshot left paths of the working tree out."""
    named = "; ".join(f"{_shown(path)} ({why})" for path, why in left_out[:LEFT_OUT_NAMED])
    more = f"; and {len(left_out) - LEFT_OUT_NAMED} more" if len(left_out) > LEFT_OUT_NAMED else ""
    return (
        f"the check's snapshot leaves out {len(left_out)} path(s) of the working tree: "
        f"{named}{more}. Raise checkpoint.max_untracked_file_bytes for large files, or "
        "copy what the check needs into the repository (submodules are not exported)."
    )


def _shown(path: str) -> str:
    # Printable and valid UTF-8 (JSON, terminals): git paths may hold any byte but NUL.
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def archive(layout: RepoLayout, tree: str, *, as_is: bool = False) -> bytes:
    """The tree as an uncompressed tar (paths relative to the workspace), every file in it
    (`export.tree_tar`; `as_is`: an as-is checkpoint's tree, exported as stored)."""
    return tree_tar(layout, tree, as_is=as_is)


def scratch_dir(tree_bytes: int) -> str | None:
    """Where to make a check's workspace: /dev/shm when it is a tmpfs with room for
    `tree_bytes` (and what the check writes), else None (the system's temporary folder)."""
    try:
        st = os.statvfs(SHM)
    except OSError:
        return None
    free = st.f_bavail * st.f_frsize
    if free < max(SHM_HEADROOM * tree_bytes, SHM_MIN_FREE) or not os.access(SHM, os.W_OK):
        return None
    return str(SHM) if _is_tmpfs(SHM) else None


_WORKSPACE_NAME = re.compile(r"nexusd-(?:run|bwrap)-(?P<ns>\d+)-(?P<pid>\d+)-[\w]+")
_SWEPT: set[str] = set()


def workspace_dir(kind: str, tree_bytes: int) -> tempfile.TemporaryDirectory[str]:
    """The temporary folder of one check's workspace (`kind`: run or bwrap), named by this
    process so that one a killed nexusd left behind is removed by the next run."""
    folder = scratch_dir(tree_bytes) or tempfile.gettempdir()
    if folder not in _SWEPT:
        _SWEPT.add(folder)
        sweep_workspaces(Path(folder))
    return tempfile.TemporaryDirectory(
        prefix=f"nexusd-{kind}-{_pid_ns()}-{os.getpid()}-", dir=folder
    )


def sweep_workspaces(folder: Path) -> list[Path]:
    """Remove the workspaces in `folder` whose nexusd process is gone; return them.

    A nexusd killed with SIGKILL (or a server stopped mid-check) cannot remove its own:
    in /dev/shm each is memory kept until reboot. Only folders of this pid namespace and
    this user are judged, so a live run elsewhere is never taken for a dead one."""
    removed: list[Path] = []
    ns = str(_pid_ns())
    for path in folder.glob("nexusd-*-*-*-*"):
        match = _WORKSPACE_NAME.fullmatch(path.name)
        if match is None or match["ns"] != ns or pid_alive(int(match["pid"])):
            continue
        with contextlib.suppress(OSError):
            if path.lstat().st_uid != os.geteuid() or path.is_symlink():
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _pid_ns() -> int:
    try:
        return Path("/proc/self/ns/pid").stat().st_ino
    except OSError:
        return 0  # no /proc (macOS): one namespace


def _is_tmpfs(path: Path) -> bool:
    # statvfs has no filesystem type: read it from the mount table.
    try:
        mounts = Path("/proc/self/mounts").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(
        fields[1] == str(path) and fields[2] == "tmpfs"
        for fields in (line.split() for line in mounts.splitlines())
        if len(fields) > 2
    )


def extract(tar_bytes: bytes, dest: Path, *, owner: int | None = None) -> list[str]:
    """Unpack a tree tar into `dest` (safe `data` filter); as root, owned by `owner`.

    Symbolic links are kept as the snapshot has them, also those to absolute paths or out
    of `dest`. Returns the members the filter refused (a path out of `dest`, a hard link
    out of it): they are left out, logged, and the rest is unpacked.
    """
    dest.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []

    def owned(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        try:
            safe = _filtered(member, path)
        except tarfile.FilterError as exc:
            refused.append(member.name)
            log.warning("left out of the check's workspace: %s (%s)", member.name, exc)
            return None
        if safe is None or owner is None:
            return safe
        # tarfile chowns to these ids when it runs as root (numeric_owner=True).
        return safe.replace(uid=owner, gid=owner, uname="", gname="", deep=False)

    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        tar.extractall(dest, filter=owned, numeric_owner=True)
    if owner is not None:
        os.chown(dest, owner, owner)
    return refused


def _filtered(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    if not member.issym():
        return tarfile.data_filter(member, path)
    # The data filter refuses links to /etc/hostname or ../sibling; docker's copy keeps
    # them, so dropping them here made the same check differ by backend. Keeping one is
    # safe: nothing is unpacked through it (a later member whose path runs through it
    # fails the filter's check of its own destination), and in the sandbox it resolves
    # in the sandbox's own filesystem. The rest of the member is filtered as usual.
    safe = tarfile.data_filter(member.replace(linkname=".", deep=False), path)
    return None if safe is None else safe.replace(linkname=member.linkname, deep=False)


def retag(tar_bytes: bytes, *, prefix: str, owner: int) -> bytes:
    """Re-emit a tree tar under `prefix/`, every entry owned by `owner` (for put_archive)."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(tar_bytes)) as src,
        tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst,
    ):
        root = tarfile.TarInfo(prefix)
        root.type = tarfile.DIRTYPE
        root.mode = 0o755
        root.uid = root.gid = owner
        dst.addfile(root)
        for member in src.getmembers():
            if member.type == tarfile.XGLTYPE or member.name in ("pax_global_header",):
                continue
            member.name = f"{prefix}/{member.name}"
            member.uid = member.gid = owner
            member.uname = member.gname = ""
            data = src.extractfile(member) if member.isfile() else None
            dst.addfile(member, data)
    return out.getvalue()
