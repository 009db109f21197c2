"""Where a report points at code: links to a repository's files, and lines it names.

A link to `…/blob/<ref>/src/cli.rs#L513-L522` names that file and line; an image, an
attachment or another issue names no code; any other link keeps its path's words. A line the
prose points at ("`jsonrep.py` at line 227", `path:12`) lists the unit holding it first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nexusd.code.query import Frame

_INSTALLED = re.compile(r"(?:^|/)(?:site|dist)-packages/")
# A line the prose points at: "`jsonrep.py` at line 227", "line 227 of jsonrep.py",
# "jsonrep.py, line 12" (a path ending as _PATH's does; `path:12` is _PATH's own group).
# A path starts where a word or a folder does not go on: tried from inside a run of path
# characters, 20 KB of `a/a/…` or `----` took seconds (quadratic), as _PATH once did.
_FILE = r"`?(?<![\w.\-])(?<![\w.\-]/)(?P<path>(?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,4})`?"
_NAMED_LINE = re.compile(
    rf"{_FILE},? (?:at |on |in )?line (?P<line>\d{{1,6}})\b"
    rf"|\blines? (?P<line2>\d{{1,6}}) (?:of|in) {_FILE.replace('path', 'path2')}"
)

# Links in a report: one to a file of a repository (`…/blob/<ref>/src/cli.rs#L513-L522`)
# names that file and line; an image, an attachment or another issue names no code; any
# other keeps its path's words (`/ref/models/querysets/`) but not its host's (`com`).
URL = re.compile(r"https?://[^\s<>()\[\]`'\"]+")
_BLOB = re.compile(
    r"https?://(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)/[^/]+/[^/]+/(?:-/)?"
    r"(?:blob|tree|src)/[^/]+/(?P<path>[^#?]+)(?:\?[^#]*)?(?:#L(?P<line>\d+)\S*)?"
)
# A file's link on a host `_BLOB` does not know: the words of its path stay, no line.
_ANY_FILE = re.compile(r"/(?:blob|tree|src)/[^#?]*\.\w+")
_NO_CODE_URL = re.compile(
    r"\.(?:png|jpe?g|gif|svg|webp|bmp|mp4|mov|webm)(?:$|\?)"
    r"|githubusercontent\.com|/user-attachments/|/assets/"
    r"|github\.com/[^/]+/[^/]+/(?:issues|pull|pulls|commit|commits|discussions|compare|releases)\b",
    re.IGNORECASE,
)


def file_link(url: str) -> bool:
    """Whether `url` links to a file of a repository (`…/blob/<ref>/src/cli.rs#L5`), on a
    known host or another (`…/src/branch/main/cli.rs` on a self-hosted forge)."""
    return _BLOB.match(url) is not None or _ANY_FILE.search(url) is not None


def _link_words(m: re.Match[str]) -> str:
    url = m.group(0).rstrip(".,;:!")
    rest = m.group(0)[len(url) :]
    blob = _BLOB.match(url)
    if blob is not None:
        path = blob.group("path").rstrip("/")
        # Said as prose says it: `path:line` alone on a line reads as a Go or Rust frame.
        line = blob.group("line")
        return f" {path} at line {line} {rest}" if line else f" {path} {rest}"
    if _NO_CODE_URL.search(url):
        return " " + rest
    path = url.split("://", 1)[1].partition("/")[2].split("?", 1)[0]
    return f" {path.replace('/', ' ')} {rest}"


def without_links(text: str) -> str:
    """`text` with each link as the code it names: a repository file's link as its path (and
    line), another's path words; none for images, attachments and other issues."""
    return URL.sub(_link_words, text) if "://" in text else text


def named_lines(
    text: str, path_pattern: re.Pattern[str], frames: Sequence[Frame]
) -> tuple[tuple[str, int], ...]:
    """(path, line) pairs the text points at (`path_pattern`'s group 2 is a `:line`), a
    frame's excepted (the frame signal's)."""
    found: dict[tuple[str, int], None] = {}
    for m in path_pattern.finditer(text):
        if m.group(2):
            found[(m.group(1).replace("\\", "/"), int(m.group(2)))] = None
    for m in _NAMED_LINE.finditer(text):
        path, line = (m["path"], m["line"]) if m["path"] else (m["path2"], m["line2"])
        found[(path, int(line))] = None
    framed = {(f.path, f.line) for f in frames}
    # An installed copy's line (`site-packages/pylint/reporters/text.py:206: UserWarning`)
    # is of the reporter's release, not of this checkout.
    return tuple(key for key in found if key not in framed and not _INSTALLED.search(key[0]))
