"""Fast paths that save a git process each: read HEAD, write a commit object, create a ref.

Each writes exactly what git's own files backend writes (a zlib-compressed loose
object; a loose ref created through a `.lock` file) and returns None when the
repository uses something else (SHA-256 objects, reftable, symref chains, permissions
shared by a group), in which case the caller runs the git command instead.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib

from nexusd.atomic import new_file
from nexusd.paths import RepoLayout

_HEX40 = re.compile(r"[0-9a-f]{40}")

try:
    # CPython's own SHA-1: hashlib would load OpenSSL (~3 ms of every `checkpoint create`).
    from _sha1 import sha1 as _sha1  # type: ignore[import-not-found]
except ImportError:  # another interpreter: hashlib has it
    from hashlib import sha1 as _sha1


def _plain_sha1_files_repo(layout: RepoLayout) -> bool:
    common = layout.git_common_dir
    if (common / "reftable").exists():
        return False
    try:
        config = (common / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    # core.sharedRepository: git makes each folder and file it adds group-writable; ours
    # would not be, and the other users could then add no object beside one of ours.
    return not any(key in config for key in ("objectformat", "refstorage", "sharedrepository"))


def read_head(layout: RepoLayout) -> tuple[bool, str | None]:
    """(known, sha): sha of HEAD or None when unborn; known=False means ask git."""
    if not _plain_sha1_files_repo(layout):
        return False, None
    try:
        head = (layout.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return False, None
    if _HEX40.fullmatch(head):
        return True, head
    if not head.startswith("ref: refs/heads/"):
        return False, None
    ref = head.removeprefix("ref: ")
    loose = layout.git_common_dir / ref
    with contextlib.suppress(FileNotFoundError, NotADirectoryError, IsADirectoryError):
        value = loose.read_text(encoding="utf-8").strip()
        return (True, value) if _HEX40.fullmatch(value) else (False, None)
    try:
        packed = (layout.git_common_dir / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return True, None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _HEX40.fullmatch(sha):
            return True, sha
    return True, None


def write_commit(layout: RepoLayout, content: bytes) -> str | None:
    """Store a commit object as a loose object; return its id (None: use git instead)."""
    if not _plain_sha1_files_repo(layout):
        return None
    raw = b"commit " + str(len(content)).encode() + b"\0" + content
    sha = str(_sha1(raw, usedforsecurity=False).hexdigest())
    folder = layout.git_common_dir / "objects" / sha[:2]
    target = folder / sha[2:]
    if target.exists():
        return sha
    folder.mkdir(exist_ok=True)
    fd, tmp = new_file(folder, "tmp_obj_")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(zlib.compress(raw, 1))
        tmp.chmod(0o444)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return sha


def create_ref(layout: RepoLayout, ref: str, sha: str) -> bool | None:
    """Create a new loose ref; False if it exists, None when git must do it."""
    if not _plain_sha1_files_repo(layout) or not ref.startswith("refs/nexus/"):
        return None
    path = layout.git_common_dir / ref
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        os.write(fd, (sha + "\n").encode())
        os.close(fd)
        # link() refuses to replace an existing ref, like update-ref with an empty old value.
        os.link(lock, path)
    except FileExistsError:
        return False
    finally:
        lock.unlink(missing_ok=True)
    return True
