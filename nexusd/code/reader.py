"""Reading and parsing the files an update needs, in worker processes when there are many.

Files are read from the working tree (their blob ids were computed from it), never through
a symlink and never outside the repository.
"""

from __future__ import annotations

import codecs
import errno
import gc
import os
import select
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from pathlib import Path, PurePosixPath

from nexusd.code.corpus import slim_unit, unit_counts
from nexusd.code.parsers import empty, parse_file
from nexusd.code.tokens import pack_counts
from nexusd.code.units import FileStatus, ParsedFile
from nexusd.processes import pid_alive

# A parsed file without its units' text, and each unit's packed token counts.
Counted = tuple[ParsedFile, tuple[str, ...]]

# Below this many files, worker processes cost more to start than they save.
POOL_MIN_FILES = 40
CHUNK = 64


def _open_beneath(root: Path, parts: Sequence[str]) -> int:
    """Open `root/parts…` one component at a time, following no link at any step.

    Checking a resolved path and then opening it leaves a gap in which a folder on the way
    can be swapped for a link out of the repository; O_NOFOLLOW on the last component
    alone does not close it. Walking with `dir_fd` does.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = step
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def read_inside(
    root: Path,
    rel: str | Path,
    max_bytes: int,
    *,
    head: bool = False,
    inside_links: bool = False,
    setting: str = "code.max_file_bytes",
) -> bytes | str:
    """The bytes of the regular file `root/rel`, or the reason they were not read (a string).

    A link anywhere on the way is refused; with `inside_links`, a link whose target is
    inside the repository is read at that target (resolved once, then walked link-free).
    """
    try:
        base = root.resolve()
        real = (base / rel).resolve()
        if not real.is_relative_to(base):
            return "leads outside the repository (not read)"
        if inside_links:
            parts = real.relative_to(base).parts
        else:
            parts = _plain_parts(os.path.relpath(os.path.normpath(root / rel), root))
        if not parts:
            return "not a regular file (not read)"
        fd = _open_beneath(base, parts)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a link loop, before Python 3.13
        return f"unreadable: {getattr(exc, 'strerror', None) or exc}"
    st = os.fstat(fd)
    # A folder, FIFO, device or socket: reading one fails, blocks or never ends (/dev/zero).
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return "not a regular file (not read)"
    with os.fdopen(fd, "rb") as fh:
        if head:
            return fh.read(max_bytes)  # the first `max_bytes`, however long the file is
        if st.st_size > max_bytes:
            return too_large(st.st_size, max_bytes, setting)
        return fh.read(max_bytes + 1)


def _plain_parts(rel: str) -> tuple[str, ...]:
    """A relative path as components, `.` dropped; one that climbs out is refused (it was
    folded lexically: no link is followed on the walk, so that is the file meant)."""
    parts = PurePosixPath(Path(rel).as_posix()).parts
    if parts[:1] == ("..",) or PurePosixPath(rel).is_absolute():
        raise OSError(errno.EXDEV, "leads outside the repository")
    return tuple(p for p in parts if p != ".")


def too_large(size: int, max_bytes: int, setting: str = "code.max_file_bytes") -> str:
    """Why a file of `size` bytes is not read (`parse_content` records it as too large)."""
    return f"too large: {size} bytes ({setting} is {max_bytes})"


def parse_content(rel: str, data: bytes | str, language: str) -> ParsedFile:
    """Parse a file's content, or record why it was not read (`data` is then that reason)."""
    if isinstance(data, str):
        status: FileStatus = "too-large" if data.startswith("too large") else "unreadable"
        return empty(rel, language, status, data)
    # A UTF-8 byte order mark (editors on Windows write one) is no character of the code:
    # Python runs such a file, but `ast` given the decoded text calls U+FEFF a syntax error.
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return parse_file(rel, data, language)
    except RecursionError:
        return empty(rel, language, "unreadable", "nested too deeply to parse")


def parse_one(root: str, rel: str, language: str, max_bytes: int) -> ParsedFile:
    """Read and parse one file; unreadable or oversized files come back without units."""
    return parse_content(rel, read_inside(Path(root), rel, max_bytes), language)


def counted(parsed: ParsedFile) -> Counted:
    """`parsed` without its units' text (only the tokens need it) and each unit's packed
    token counts (`tokens.pack_counts`)."""
    terms = tuple(pack_counts(unit_counts(u)) for u in parsed.units)
    return replace(parsed, units=tuple(map(slim_unit, parsed.units))), terms


def parse_counted(root: str, rel: str, language: str, max_bytes: int) -> Counted:
    """Parse one file and count its units' tokens (`counted`)."""
    return counted(parse_one(root, rel, language, max_bytes))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run a block without the cyclic garbage collector (restored after, if it was on).

    Parsing and indexing make millions of short-lived objects (AST nodes, units,
    counters) and no reference cycles: the collector's passes over them found nothing
    and cost a quarter of a parse's CPU, and a third of a corpus rebuild's time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse_chunk(root: str, items: Sequence[tuple[str, str]], max_bytes: int) -> list[Counted]:
    # In the worker: the tokens are counted in parallel, and what crosses back to the
    # parent is a few short strings per unit instead of every unit's text.
    with collector_paused():
        return [parse_counted(root, rel, language, max_bytes) for rel, language in items]


def _size(root: Path, rel: str) -> int:
    try:
        return os.lstat(root / rel).st_size
    except OSError:
        return 0


def _balanced(
    root: Path, items: Sequence[tuple[str, str]], workers: int
) -> list[Sequence[tuple[str, str]]]:
    """Chunks for `workers` processes: largest files first, several chunks per worker.

    An update of a hundred files in two chunks of 64 left one worker idle while the other
    parsed the big files, and the parent had nothing to store until a whole chunk was done.
    """
    ordered = sorted(items, key=lambda item: _size(root, item[0]), reverse=True)
    size = max(4, min(CHUNK, -(-len(ordered) // (workers * 4))))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def pool_context() -> BaseContext:
    """How parser workers start: forked from a server process that has the parser imported.

    A forked daemon would copy its threads' locks (and maybe torch) into the worker;
    spawning a fresh interpreter per update instead cost about a second of every
    checkout (start-up and imports, twice). The fork server is clean and single-threaded,
    started once per process, and every worker after the first pool forks from it ready.
    """
    if "forkserver" not in get_all_start_methods():
        return get_context("spawn")
    context = get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _follow_owner(owner: int) -> None:
    """In a worker: exit as soon as the process that started the pool is gone.

    Workers fork from the fork server, not from their owner, and hold pipe ends the server
    and the other workers wait on: when a daemon was killed mid-update, its workers, the
    fork server and the resource tracker all stayed behind, blocked, for good.
    """

    def watch() -> None:
        try:
            fd = os.pidfd_open(owner)
        except (AttributeError, OSError):  # not Linux ≥ 5.3, or the owner is already gone
            while pid_alive(owner):
                time.sleep(1.0)
        else:
            select.select([fd], [], [])  # readable once the owner has exited
        os._exit(1)

    threading.Thread(target=watch, name="nexusd-pool-owner", daemon=True).start()


def parse_many(
    root: Path,
    items: Sequence[tuple[str, str]],
    max_bytes: int,
    workers: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[Counted]]:
    """Parse and count (path, language) items, yielding results chunk by chunk as they
    finish (`parse_counted`)."""
    if workers <= 1 or len(items) < POOL_MIN_FILES:
        chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
        for chunk in chunks:
            done = _parse_chunk(str(root), chunk, max_bytes)
            if progress:
                progress(len(done))
            yield done
        return
    chunks = _balanced(root, items, workers)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=pool_context(),
        initializer=_follow_owner,
        initargs=(os.getpid(),),
    )
    try:
        futures = [pool.submit(_parse_chunk, str(root), chunk, max_bytes) for chunk in chunks]
        for future in as_completed(futures):
            done = future.result()
            if progress:
                progress(len(done))
            yield done
    finally:
        # A caller that stops early (the daemon stopping) does not wait for the rest.
        pool.shutdown(wait=True, cancel_futures=True)
