"""Write a checkpoint's files into the working tree, with the bytes the snapshot read.

A checkpoint made `as-is` (see `convert`) holds each file's bytes as they were on disk, so
its regular files that a checkout converts are written from their blobs untouched;
`checkout-index` would convert them again (an LF file under `eol=crlf` would come back
CRLF). The rest (files no attribute converts, symbolic links, files a filter driver owns
such as Git LFS's, and every file of an older checkpoint, which holds git's cleaned blobs)
are checked out by git as before, which streams them instead of holding them in memory.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from nexusd.checkpoint.convert import FILE_MODES, checkout_converts
from nexusd.checkpoint.model import Checkpoint
from nexusd.checkpoint.snapshot import temp_index
from nexusd.git import cat_blobs, join_z, run_git
from nexusd.paths import RepoLayout

# What a restore holds in memory at once of the blobs it writes (one larger blob alone).
CHUNK_BYTES = 32 * 1024 * 1024


def write_files(
    layout: RepoLayout, target: Checkpoint, entries: Sequence[tuple[str, str, str]]
) -> None:
    """Write `entries` (path, mode, blob) of `target` over the working tree."""
    with temp_index(layout, seed=False) as env:
        # The target's own index: checkout-index writes from it, and the attributes that
        # say which files a filter driver owns are read from its `.gitattributes` files.
        run_git(layout.root, "read-tree", target.tree, env=env)
        as_is: list[tuple[str, str, str]] = []
        if target.as_is:
            files = [e for e in entries if e[1] in FILE_MODES]
            converted = checkout_converts(layout, [path for path, _, _ in files], env)
            as_is = [e for e in files if e[0] in converted]
        written = {path for path, _, _ in as_is}
        rest = [path for path, _, _ in entries if path not in written]
        if rest:
            run_git(
                layout.root,
                "checkout-index",
                "-f",
                "-z",
                "--stdin",
                env=env,
                input=join_z(rest),
            )
    for path, mode, data in _blobs(layout, as_is):
        _write(layout.root, path, mode, data)


def _blobs(
    layout: RepoLayout, entries: Sequence[tuple[str, str, str]]
) -> Iterator[tuple[str, str, bytes]]:
    """(path, mode, contents) of each of `entries`, read a chunk of blobs at a time."""
    if not entries:
        return
    query = "".join(f"{oid}\n" for _, _, oid in entries).encode()
    out = run_git(layout.root, "cat-file", "--batch-check=%(objectsize)", input=query)
    sizes = [int(size) for size in out.split()]
    chunk: list[tuple[str, str, str]] = []
    held = 0
    for entry, size in zip(entries, sizes, strict=True):
        if chunk and held + size > CHUNK_BYTES:
            yield from _chunk(layout, chunk)
            chunk, held = [], 0
        chunk.append(entry)
        held += size
    yield from _chunk(layout, chunk)


def _chunk(
    layout: RepoLayout, entries: Sequence[tuple[str, str, str]]
) -> Iterator[tuple[str, str, bytes]]:
    # One `git cat-file --batch` for the chunk.
    datas = cat_blobs(layout.root, (oid for _, _, oid in entries))
    for (path, mode, _oid), data in zip(entries, datas, strict=True):
        yield path, mode, data


def _write(root: Path, rel: str, mode: str, data: bytes) -> None:
    """Write one file as `checkout-index -f` does: missing folders made, whatever file or
    link is at the path replaced, the mode 0666 or 0777 less the umask."""
    path = root
    *folders, name = rel.split("/")
    for part in folders:
        path = path / part
        try:
            path.mkdir()
        except FileExistsError:
            # The restore checked that no file or link is in the way; one made since is
            # not followed (it may point out of the working tree).
            if not stat.S_ISDIR(path.lstat().st_mode):
                raise NotADirectoryError(f"{path} is in the way of {rel}") from None
    path = path / name
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o777 if mode == "100755" else 0o666)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
