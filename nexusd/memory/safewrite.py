"""Writing into files a person may be editing at the same moment, without clobbering them.

Writers in nexusd take a lock per file (under the tree's `<git-dir>/nexus/locks/`);
editors take none, so every write also re-reads the file right before it
commits: appends go through O_APPEND (never a rewrite), a new file is created
only if none exists (hard link of a complete temporary file), and an insertion
in the middle is retried when the file changed since it was read.

Every write is confined to the repository: `confined()` refuses a path that
resolves outside it (a `memory/daily/<today>.md` linked to ~/.bashrc got
nexusd's entries appended), and the final open never follows a link, so a link
swapped in after the check is refused by the kernel (ELOOP), not followed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from nexusd.atomic import atomic_write_text
from nexusd.errors import NexusError

RETRIES = 5


def confined(root: Path, path: Path) -> Path:
    """`path` with its links resolved, or NexusError when that lands outside `root`."""
    real_root = root.resolve()
    try:
        real = path.resolve()
    except (RuntimeError, OSError) as exc:  # a symbolic link loop (RuntimeError before 3.13)
        raise NexusError(
            f"refusing to write {path}: it is a symbolic link that never reaches a file ({exc})",
            hint=f"replace the link with a regular file: rm {path} (nexusd creates it again)",
        ) from exc
    if real == real_root or real_root not in real.parents:
        link = _folder_link_out(root, path)
        if link is not None:
            # `rm <file>` would go through the folder link and delete a file out there.
            raise NexusError(
                f"refusing to write {path}: {os.path.relpath(link, root)} is a symbolic link to"
                f" {link.resolve()}, outside the repository {real_root}; nexusd never writes"
                " through a link out of it",
                hint=f"replace the link with a real folder: rm {link} (removes the link only,"
                f" not the folder it points to), then mkdir {link}",
            )
        raise NexusError(
            f"refusing to write {path}: it resolves to {real}, outside the repository "
            f"{real_root} (a symbolic link); nexusd never writes through a link out of it",
            hint=f"replace the link with a regular file: rm {path} (nexusd creates it again)",
        )
    return real


def _folder_link_out(root: Path, path: Path) -> Path | None:
    """The first folder on the way from `root` to `path` that is a link out of `root`."""
    real_root = root.resolve()
    try:
        parts = path.absolute().relative_to(root.absolute()).parts[:-1]
    except ValueError:
        return None
    probe = root
    for part in parts:
        probe = probe / part
        if probe.is_symlink() and not probe.resolve().is_relative_to(real_root):
            return probe
    return None


def _nofollow(path: Path, flags: int) -> int:
    """Open without following a final link (one planted since `confined` looked)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NexusError(
                f"refusing to write {path}: it became a symbolic link",
                hint=f"replace the link with a regular file: rm {path}",
            ) from exc
        raise


@contextlib.contextmanager
def locked(lock_dir: Path, target: Path) -> Iterator[None]:
    """Hold an exclusive lock for `target` (between nexusd writers)."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(str(target.absolute()).encode()).hexdigest()[:20] + ".lock"
    fd = os.open(lock_dir / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def create_exclusive(path: Path, text: str) -> bool:
    """Create `path` with `text` only if it does not exist; False when it already did."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(0o644)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


def _separator(current: bytes) -> str:
    """What goes between existing text and a new block: one blank line, no more."""
    if not current or current.endswith(b"\n\n"):
        return ""
    return "\n" if current.endswith(b"\n") else "\n\n"


def append_block(path: Path, block: str) -> int:
    """Append `block` as its own paragraph; returns the 1-based line where it starts."""
    fd = _nofollow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        # Re-read right before writing: what is there now, not what we saw earlier.
        size = os.fstat(fd).st_size
        current = os.pread(fd, size, 0) if size else b""
        sep = _separator(current)
        os.write(fd, (sep + block.rstrip("\n") + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return current.count(b"\n") + sep.count("\n") + 1 if current else 1


def _read(path: Path) -> str:
    fd = _nofollow(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8")


def rewrite_checked(path: Path, edit: Callable[[str], str]) -> str:
    """Apply `edit` to the file's text and replace it atomically, retrying if it changed."""
    for _ in range(RETRIES):
        before = _read(path)
        after = edit(before)
        mode = path.stat().st_mode & 0o777
        if _read(path) != before:
            continue
        atomic_write_text(path, after, mode=mode)
        return after
    raise NexusError(
        f"{path} kept changing while nexusd tried to write to it",
        hint="save your edits and run the command again",
    )
