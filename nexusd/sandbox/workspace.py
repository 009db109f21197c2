"""Export an exact snapshot (a git tree) into a sandbox's workspace; never touch live files.

The working tree is snapshotted the way checkpoints are (`checkpoint/snapshot.py`: a
temporary index, the size cap for untracked files), so the user's index and files stay as
they were.
"""

from __future__ import annotations

import io
import logging
import os
import tarfile
from pathlib import Path

from nexusd.checkpoint.snapshot import MAX_UNTRACKED_BYTES, snapshot_tree
from nexusd.errors import GitError
from nexusd.git import run_git, try_git_text
from nexusd.paths import RepoLayout

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
        return snapshot_tree(layout, max_untracked_bytes=max_untracked_bytes)
    tree = try_git_text(layout.root, "rev-parse", "--verify", "--quiet", f"{treeish}^{{tree}}")
    if tree is None:
        raise GitError(
            f"{treeish!r} is not a commit or tree in {layout.root}",
            hint="pass a checkpoint id (`nexusd checkpoint list`) or a commit sha",
        )
    return tree


def archive(layout: RepoLayout, tree: str) -> bytes:
    """The tree as an uncompressed tar (paths relative to the workspace)."""
    hint = "check that the repository and the snapshot id are valid"
    return run_git(layout.root, "archive", "--format=tar", tree, hint=hint)


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

    Returns the members the filter refused (links to absolute paths or out of `dest`): they
    are left out, logged, and the rest is unpacked.
    """
    dest.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []

    def owned(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        try:
            safe = tarfile.data_filter(member, path)
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
