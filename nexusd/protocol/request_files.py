"""Creating request files: complete on first sight, never replacing another request."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import cast

from nexusd.errors import NexusError
from nexusd.protocol.naming import new_request_name

MAX_ATTEMPTS = 100


def create_request_file(
    folder: Path, text: str, now: datetime, *, root: Path | None = None
) -> Path:
    """Write `text` as a new `<ts>_plan_request.md` in `folder`, atomically and exclusively;
    with `root`, refuse (NexusError) a folder that resolves outside that repository."""
    if root is not None:
        _refuse_outside(folder, root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # Dot-prefixed `.tmp` so watchers ignore it; it is published whole under a free name.
        fd, tmp = tempfile.mkstemp(prefix=".request.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _cannot_write(folder, exc) from exc
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise _cannot_write(folder, exc) from exc
        Path(tmp).chmod(0o644)  # mkstemp makes 0600; requests are ordinary shared files
        for _ in range(MAX_ATTEMPTS):
            target = folder / new_request_name(now, folder)
            if _publish(Path(tmp), target):
                return target
        raise FileExistsError(f"no free request name in {folder} for {now.isoformat()}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()


def _cannot_write(folder: Path, exc: OSError) -> NexusError:
    """What to do when no request file can be written in `folder` (nothing was written)."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return NexusError(
            f"cannot write a request in {folder}: it (or a folder above it) is a file,"
            " not a folder; nothing was written",
            hint="move that file out of the way, or write the request elsewhere"
            " (`nexusd request new --dir FOLDER`, or another first folder in `watch.paths`)",
        )
    return NexusError(
        f"cannot write a request in {folder}: {exc.strerror or exc}; nothing was written",
        hint="make the folder writable (and check the disk has room), or write the request"
        " elsewhere (`nexusd request new --dir FOLDER`)",
    )


def _publish(tmp: Path, target: Path) -> bool:
    """Give the complete file `tmp` the name `target` unless that name is taken (False)."""
    # A rename that refuses to replace: watchers see a file moved into place, complete (the
    # daemon answers it after `watch.settle_ms`, not after a writer's grace period).
    renamed = _rename_noreplace(tmp, target)
    return renamed if renamed is not None else publish_by_link(tmp, target)


def publish_by_link(tmp: Path, target: Path) -> bool:
    """`_publish` where there is no RENAME_NOREPLACE: a hard link fails instead of
    overwriting, too."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        return False
    except OSError:
        # No hard links either (some FUSE / FAT mounts): a plain atomic rename instead.
        if target.exists():
            return False
        tmp.replace(target)
        return True
    # A link is only "created" (no writer closes it): a close says it is complete.
    with contextlib.suppress(OSError):
        os.close(os.open(target, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC))
    return True


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
# errno values saying the platform or file system has no RENAME_NOREPLACE.
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}


def _rename_noreplace(tmp: Path, target: Path) -> bool | None:
    """renameat2(RENAME_NOREPLACE): True done, False name taken, None not available here."""
    func = _renameat2()
    if func is None:
        return None
    import ctypes

    if func(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE) == 0:
        return True
    err = ctypes.get_errno()
    if err == errno.EEXIST:
        return False
    if err in _UNSUPPORTED:
        return None
    raise OSError(err, os.strerror(err), str(target))


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """glibc's `renameat2` (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    return cast("Callable[..., int]", func)


def _refuse_outside(folder: Path, root: Path) -> None:
    """Raise before a byte is written when `folder` (through links) lies outside `root`."""
    real_root = root.resolve()
    real = folder.resolve()  # follows a link such as `.scratchpad_logs -> /tmp/out`
    if real.is_relative_to(real_root):
        return
    raise NexusError(
        f"{folder} resolves to {real}, outside the repository {real_root}: nothing was"
        " written (nexusd neither reads nor answers requests there)",
        hint=f"make `{folder.name}` a real folder inside the repository, not a link to elsewhere",
    )
