"""Reading protocol files by their predictable names: never through a link, never a FIFO.

Request and response names are predictable, so a link or FIFO planted under one must
neither be followed (its target may lie outside the repository) nor hang the reader.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from nexusd.protocol.render import read_response_meta

# The front matter is at the top: a huge foreign file is not read whole to find it.
META_BYTES = 65_536
# A response of ours whose front matter is longer (an error echoing a long value, as nexusd
# wrote before it cut such values) is read on to the front matter's closing line, this far.
MAX_META_BYTES = 4 * 1_048_576
_OPENS = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*(?:\r\n|\r|\n)")
_CLOSES = re.compile(rb"[\r\n](?:---|\.\.\.)[ \t]*[\r\n]")


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading; OSError when absent, a link, a FIFO, a folder or a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fh


def read_regular_file(path: Path, limit: int = -1) -> bytes:
    """The bytes of `path` (at most `limit`); raises like `open_regular`."""
    with open_regular(path) as fh:
        return fh.read(limit)


def read_head(path: Path) -> bytes:
    """The first bytes of `path`, through the end of its front matter when it opens with
    one (at most MAX_META_BYTES); raises like `open_regular`."""
    with open_regular(path) as fh:
        data = fh.read(META_BYTES)
        if not _OPENS.match(data):
            return data
        searched = 0
        while not _CLOSES.search(data, searched) and len(data) < MAX_META_BYTES:
            chunk = fh.read(META_BYTES)
            if not chunk:
                break
            searched = max(len(data) - 8, 0)  # a closing line may straddle two reads
            data += chunk
    return data


def response_meta(response: Path) -> tuple[bool, dict[str, object] | None]:
    """(exists, nexusd's front matter) of a response, never following a link."""
    try:
        data = read_head(response)
    except FileNotFoundError:
        return False, None
    except OSError:
        return os.path.lexists(response), None
    return True, read_response_meta(data.decode("utf-8", "replace"))


def content_sha256(path: Path) -> str | None:
    """SHA-256 (hex) of all of `path`'s bytes; None when it cannot be read as a regular file."""
    digest = hashlib.sha256()
    try:
        with open_regular(path) as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()
