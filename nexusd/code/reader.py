"""Reading and parsing the files an update needs, in worker processes when there are many.

Files are read from the working tree (their blob ids were computed from it), never through
a symlink and never outside the repository.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from nexusd.code.parsers import empty, parse_file
from nexusd.code.units import FileStatus, ParsedFile

# Below this many files, worker processes cost more to start than they save.
POOL_MIN_FILES = 40
CHUNK = 64


def read_inside(
    root: Path,
    rel: str | Path,
    max_bytes: int,
    *,
    head: bool = False,
    inside_links: bool = False,
    setting: str = "code.max_file_bytes",
) -> bytes | str:
    """The bytes of the regular file `root/rel`, or the reason they were not read (a string)."""
    path = root / rel
    try:
        real = path.resolve()
        if not real.is_relative_to(root.resolve()):
            return "leads outside the repository (not read)"
        # O_NOFOLLOW: a link is refused (or, with `inside_links`, its checked target is
        # opened) and one swapped in after the check is refused by the kernel. O_NONBLOCK:
        # opening a FIFO returns at once instead of waiting forever for a writer.
        fd = os.open(real if inside_links else path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a link loop, before Python 3.13
        return f"unreadable: {getattr(exc, 'strerror', None) or exc}"
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        # A FIFO, device or socket: reading one blocks or never ends (/dev/zero).
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file (not read)"
        if head:
            return fh.read(max_bytes)  # the first `max_bytes`, however long the file is
        if st.st_size > max_bytes:
            return f"too large: {st.st_size} bytes ({setting} is {max_bytes})"
        return fh.read(max_bytes + 1)


def parse_one(root: str, rel: str, language: str, max_bytes: int) -> ParsedFile:
    """Read and parse one file; unreadable or oversized files come back without units."""
    data = read_inside(Path(root), rel, max_bytes)
    if isinstance(data, str):
        status: FileStatus = "too-large" if data.startswith("too large") else "unreadable"
        return empty(rel, language, status, data)
    try:
        return parse_file(rel, data, language)
    except RecursionError:
        return empty(rel, language, "unreadable", "nested too deeply to parse")


def _parse_chunk(root: str, items: Sequence[tuple[str, str]], max_bytes: int) -> list[ParsedFile]:
    return [parse_one(root, rel, language, max_bytes) for rel, language in items]


def parse_many(
    root: Path,
    items: Sequence[tuple[str, str]],
    max_bytes: int,
    workers: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[ParsedFile]]:
    """Parse (path, language) items, yielding results chunk by chunk as they finish."""
    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    if workers <= 1 or len(items) < POOL_MIN_FILES:
        for chunk in chunks:
            done = _parse_chunk(str(root), chunk, max_bytes)
            if progress:
                progress(len(done))
            yield done
        return
    # Spawned, not forked: the daemon has threads (and maybe torch) that a fork would copy.
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
    try:
        futures = [pool.submit(_parse_chunk, str(root), chunk, max_bytes) for chunk in chunks]
        for future in futures:
            done = future.result()
            if progress:
                progress(len(done))
            yield done
    finally:
        # A caller that stops early (the daemon stopping) does not wait for the rest.
        pool.shutdown(wait=True, cancel_futures=True)
