"""Atomic file writes: a temporary file in the same folder, fsync, then rename."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

# new_file creates 0600 files; new files should get the mode `open()` would give them.
_UMASK = os.umask(0)
os.umask(_UMASK)
DEFAULT_MODE = 0o666 & ~_UMASK


def _mode_for(path: Path) -> int:
    # Replacing a file keeps its mode (an executable script stays executable).
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return DEFAULT_MODE


# The longest file name (in bytes) of the file systems nexusd writes to (ext4, xfs, btrfs…).
NAME_MAX = 255
_RANDOM_CHARS = 12  # os.urandom(6).hex()


def fitting_prefix(prefix: str, suffix: str) -> str:
    """`prefix`, shortened when `<prefix><12 hex><suffix>` would be too long a file name.

    The start is replaced by a digest of the whole prefix and the end is kept, so the
    temporary file of a 254-byte name still ends `…_plan_response.md.<hex>.tmp` (what
    the stale-file cleanup looks for) and stays distinct from other names' temporaries.
    """
    raw = os.fsencode(prefix)
    room = NAME_MAX - _RANDOM_CHARS - len(os.fsencode(suffix))
    if len(raw) <= room:
        return prefix
    import hashlib  # only for over-long names

    lead = "." if prefix.startswith(".") else ""
    digest = hashlib.sha256(raw).hexdigest()[:16]
    tail = raw[len(raw) - (room - len(lead) - len(digest) - 1) :]
    while tail and tail[0] & 0xC0 == 0x80:  # start on a whole UTF-8 character
        tail = tail[1:]
    return f"{lead}{digest}~{os.fsdecode(tail)}"


def new_file(folder: Path, prefix: str, suffix: str = "") -> tuple[int, Path]:
    """A new file of our own in `folder`, open for writing (mode 0600): `tempfile.mkstemp`
    without importing tempfile (and random, shutil, bz2, lzma) into every command."""
    prefix = fitting_prefix(prefix, suffix)
    while True:
        path = folder / f"{prefix}{os.urandom(6).hex()}{suffix}"
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), path
        except FileExistsError:
            continue


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` so readers see the old file or the whole new one, never a part.

    The file gets `mode`, else the mode of the file it replaces, else the umask's default.
    """
    tmp = staged_file(path, data, mode=mode)
    try:
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def staged_file(path: Path, data: bytes, *, mode: int | None = None) -> Path:
    """A new temporary file beside `path` holding `data` on disk, for `link_into_place`.

    Dot-prefixed and ending `.tmp`, so that a killed process's is swept up; the caller
    renames it over `path` (atomic_write_bytes), links it into place, or removes it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # Dot-prefixed and suffixed `.tmp` so our own watcher ignores it.
    fd, tmp = new_file(path.parent, f".{path.name}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.chmod(_mode_for(path) if mode is None else mode)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return tmp


# link(2) errors of file systems that have no hard links (FAT, some FUSE and network mounts).
_NO_HARD_LINKS = frozenset(
    {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS}
)


def link_into_place(staged: Path, path: Path) -> bool:
    """Give the staged file the name `path` unless something is there (then False).

    Readers see no file or the whole new one. Unlike a rename, the link never replaces a
    file that appeared at `path` meanwhile (a person's save): the caller deals with it.
    """
    try:
        os.link(staged, path, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # No hard links here: a rename, after a look; only a file created in the instant
        # between the two could be replaced.
        if os.path.lexists(path):
            return False
        staged.replace(path)
        return True
    with contextlib.suppress(FileNotFoundError):
        staged.unlink()
    return True


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write UTF-8 `text` atomically (see atomic_write_bytes)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)
