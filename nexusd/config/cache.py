"""The validated configuration kept under the repository's state, for commands that start
often (`nexusd checkpoint create`, `nexusd request new`): a hit skips importing YAML and
parsing and validating the files (~20 ms of a ~0.2 s command).

The cache holds the merged, validated data of the last load and the identity (device,
inode, size, mtime, ctime) of every file it depends on: the user's and the repository's
configuration files and nexusd's own configuration modules (the defaults and the rules).
It is used only while every one of them is unchanged. A load whose files changed less than
RACY_SECONDS before it is not cached (an edit within the same clock tick can keep the
mtime), and an invalid configuration is never cached: `load_config` raises as before.
`marshal` keeps the data's exact types (tuples stay tuples), so a cached configuration is
equal to a freshly loaded one, and costs no import.
"""

from __future__ import annotations

import contextlib
import marshal
import sys
import time
from pathlib import Path
from typing import Any

from nexusd import __version__
from nexusd.atomic import atomic_write_bytes
from nexusd.config import Config, load_config, user_config_path
from nexusd.paths import RepoLayout

CACHE_FILE = "config.cache"
RACY_SECONDS = 2.0
# Every module of this package: the defaults and the rules live in several, and a list of
# names falls behind when one is split (defaults.py once was, and its edits went unseen).
_PACKAGE_DIR = Path(__file__).parent

Identity = tuple[tuple[str, int, int, int, int, int] | tuple[str], ...]


def _identity(files: list[Path]) -> Identity:
    out: list[tuple[str, int, int, int, int, int] | tuple[str]] = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            out.append((str(path),))  # missing (or unreadable: load_config says why)
            continue
        out.append((str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def _depends_on(layout: RepoLayout) -> list[Path]:
    modules = sorted(_PACKAGE_DIR.glob("*.py"))
    return [user_config_path(), layout.config_file, *modules]


def _packages() -> tuple[tuple[str, int], ...]:
    """The import path and when each of its folders last changed: whether a configuration
    is valid depends on the installed planner plugins (`planner.provider` may name one), and
    installing or removing a package changes its folder (a new PYTHONPATH changes the path)."""
    out: list[tuple[str, int]] = []
    for entry in sys.path:
        try:
            out.append((entry, Path(entry or ".").stat().st_mtime_ns))
        except OSError:
            out.append((entry, -1))
    return tuple(out)


def _settled(identity: Identity) -> bool:
    """Whether no file changed within the last RACY_SECONDS (by mtime or ctime: `touch -d`
    and `cp -p` set an old mtime on a file that changed just now)."""
    newest = max((max(entry[4], entry[5]) for entry in identity if len(entry) == 6), default=0)
    return time.time_ns() - newest > RACY_SECONDS * 1e9


def load_config_cached(layout: RepoLayout) -> Config:
    """`load_config(layout.root)`, from the cache while no file it depends on changed."""
    files = _depends_on(layout)
    key: tuple[Any, ...] = (__version__, _identity(files), _packages())
    cache = layout.state_dir / CACHE_FILE
    with contextlib.suppress(OSError, EOFError, ValueError, TypeError, IndexError):
        stored = marshal.loads(cache.read_bytes())
        if stored[0] == key:
            return Config(data=stored[1], sources=stored[2])
    config = load_config(layout.root)
    if key[1] == _identity(files) and _settled(key[1]):
        with contextlib.suppress(OSError, ValueError):
            data = marshal.dumps((key, dict(config.data), dict(config.sources)))
            atomic_write_bytes(cache, data, mode=0o600)
    return config
