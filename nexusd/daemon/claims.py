"""The per-request claim: one process at a time answers a request, and no lock file stays.

The claim is an flock on `<git-dir>/nexus/claims/<key>.lock` (per tree), one per request
path, taken by every process that answers: the daemon's worker and any number of
foreground `nexusd plan` runs. Whoever comes second waits, then finds the response
already names the request's content and skips it.

The holder removes the lock file as it releases the claim, while it still holds the lock.
A process that was waiting on that file then holds a lock on an inode no longer at the
path, and a newcomer may already have created a new file there; so every claimant, once
it has its lock, checks that the path still names the inode it locked, and starts over on
the new file otherwise. Two processes never hold one request's claim at once, and claims
do not pile up. `sweep_claims` removes the files of holders that were killed (the same way:
only a file it can lock at once and that is still the one at the path).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from nexusd.paths import RepoLayout


def request_key(path: Path) -> Path:
    """The request's path with its folder resolved and its own name kept (links not followed)."""
    return path.parent.resolve() / path.name


def claims_dir(layout: RepoLayout) -> Path:
    """Where this tree's claim lock files live."""
    return layout.nexus_dir / "claims"


def claim_file(layout: RepoLayout, path: Path) -> Path:
    """The lock file that serialises everyone answering `path`."""
    digest = hashlib.sha256(os.fsencode(request_key(path))).hexdigest()[:32]
    return claims_dir(layout) / f"{digest}.lock"


def _is_current(fd: int, lock: Path) -> bool:
    """Whether `lock` still names the file open as `fd` (not removed, not replaced)."""
    try:
        there = lock.stat()
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def _open(lock: Path) -> int:
    try:
        return os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except FileNotFoundError:
        lock.parent.mkdir(parents=True, exist_ok=True)
        return os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _lock(lock: Path, on_wait: Callable[[], None] | None) -> int:
    """An fd holding the exclusive lock of the file currently at `lock`."""
    waited = False
    while True:
        fd = _open(lock)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None and not waited:
                    waited = True
                    on_wait()
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _is_current(fd, lock):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed it as it released: lock the file there now


@contextlib.contextmanager
def request_claim(
    layout: RepoLayout, path: Path, *, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the request's claim; blocks while another process answers it (`on_wait` first)."""
    lock = claim_file(layout, path)
    fd = _lock(lock, on_wait)
    try:
        yield
    finally:
        try:
            # Still ours unless someone deleted it by hand: never remove another's file.
            if _is_current(fd, lock):
                with contextlib.suppress(OSError):
                    lock.unlink()
        finally:
            os.close(fd)  # releases the lock, after the unlink


def sweep_claims(layout: RepoLayout) -> int:
    """Remove claim files nobody holds (their holder was killed); returns how many."""
    folder = claims_dir(layout)
    if not folder.is_dir():
        return 0
    removed = 0
    for lock in folder.glob("*.lock"):
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile, or not ours to open
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _is_current(fd, lock):
                lock.unlink()
                removed += 1
        except OSError:
            pass  # held right now (BlockingIOError), or already removed
        finally:
            os.close(fd)
    return removed
