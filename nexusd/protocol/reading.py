"""Reading protocol files by their predictable names: never through a link, never a FIFO.

Request and response names are predictable, so a link or FIFO planted under one must
neither be followed (its target may lie outside the repository) nor hang the reader.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from nexusd.protocol.render import read_response_meta

# The front matter is at the top: a huge foreign file is not read whole to find it.
META_BYTES = 65_536


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


def response_meta(response: Path) -> tuple[bool, dict[str, object] | None]:
    """(exists, nexusd's front matter) of a response, never following a link."""
    try:
        data = read_regular_file(response, META_BYTES)
    except FileNotFoundError:
        return False, None
    except OSError:
        return os.path.lexists(response), None
    return True, read_response_meta(data.decode("utf-8", "replace"))
