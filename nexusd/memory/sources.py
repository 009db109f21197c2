"""Which files are memory: `memory.sources` plus `memory.extra_globs`, relative to the root.

Globs use `*` within one path segment and `**` across segments, like git.
Hidden files (our own atomic-write temporaries start with a dot) never count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from nexusd.config import Config


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob (`*`, `**`, `?`) into an anchored regex over posix paths."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(ch, re.escape(ch)))
        i += 1
    return re.compile("".join(out) + r"\Z")


def memory_globs(config: Config) -> tuple[str, ...]:
    """The configured source globs, in order, without duplicates."""
    globs = [*config.memory.sources, *config.memory.extra_globs]
    return tuple(dict.fromkeys(g.strip().lstrip("./") for g in globs if g.strip()))


def relative(root: Path, path: Path) -> str | None:
    """`path` relative to `root` as posix text, or None when it lies outside."""
    candidate = path if path.is_absolute() else root / path
    try:
        return candidate.resolve(strict=False).relative_to(root.resolve()).as_posix()
    except ValueError:
        try:
            return candidate.absolute().relative_to(root.absolute()).as_posix()
        except ValueError:
            return None


def matches(rel: str, globs: Sequence[str]) -> bool:
    """True when the relative path is a visible markdown file matched by one of the globs."""
    name = rel.rsplit("/", 1)[-1]
    if not name or name.startswith(".") or any(p.startswith(".") for p in rel.split("/")[:-1]):
        return False
    return any(glob_regex(g).match(rel) for g in globs)


def is_memory_path(root: Path, config: Config, path: Path) -> bool:
    """True when `path` (absolute or root-relative) is a memory source file."""
    rel = relative(root, path)
    return rel is not None and matches(rel, memory_globs(config))


def list_memory_files(root: Path, config: Config) -> list[str]:
    """Relative paths of the memory files present on disk, sorted."""
    found: set[str] = set()
    for pattern in memory_globs(config):
        for hit in root.glob(pattern):
            rel = relative(root, hit)
            if rel is not None and hit.is_file() and matches(rel, [pattern]):
                found.add(rel)
    return sorted(found)
