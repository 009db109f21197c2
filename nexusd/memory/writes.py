"""`nexusd memory add`: one well-formed entry into MEMORY.md (under its category) or today's note.

Never rewrites a file from a stale copy: appends use O_APPEND, an insertion in
the middle of MEMORY.md re-reads the file and retries if someone saved in
between (see safewrite).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from nexusd.errors import NexusError
from nexusd.memory.daily import ensure_daily
from nexusd.memory.safewrite import (
    append_block,
    confined,
    create_exclusive,
    locked,
    rewrite_checked,
)
from nexusd.paths import RepoLayout

DEFAULT_CATEGORY = "Notes"
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_TAG = re.compile(r"^[A-Za-z][\w-]*$")


def _refuse_breakers(lines: Sequence[str]) -> None:
    """Refuse text that would change the structure of the file it goes into.

    An unclosed fence or comment hides every heading after it from the readers (chunking,
    the section finder, role filters), so later entries would be filed, and shown, under
    this entry's category; a control character makes the file binary to git and the index.
    """
    text = "\n".join(lines)
    bad = sorted(
        {f"U+{ord(c):04X}" for c in text if c not in "\t\n" and unicodedata.category(c) == "Cc"}
    )
    if bad:
        raise NexusError(
            f"the text holds control characters ({', '.join(bad)})",
            hint="remove them; tabs and newlines are fine",
        )
    if "<!--" in text or "-->" in text:
        raise NexusError(
            "the text holds an HTML comment marker (<!-- or -->)",
            hint="remove it: a comment would hide the entries and headings after it",
        )
    if sum(1 for line in lines if _FENCE.match(line)) % 2:
        raise NexusError(
            "the text opens a code fence (``` or ~~~) that it does not close",
            hint="close the fence in the same entry",
        )


def _refuse_unwritable(root: Path, path: Path) -> None:
    """Refuse a target that is no UTF-8 text file: the index skips such a file whole, so an
    entry added to it would never be found (and a Latin-1 file would become mixed)."""
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    if path.exists() and not path.is_file():
        raise NexusError(f"{rel} is not a file", hint=f"move it away so nexusd can create {rel}")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NexusError(
            f"{rel} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}), "
            "so it is not indexed; nothing was added",
            hint=f"re-save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8 {rel}`), then add again",
        ) from exc


def format_entry(text: str, tags: Sequence[str], when: datetime) -> str:
    """`- YYYY-MM-DD: text #tag …`, continuation lines indented under the bullet."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    if not lines:
        raise NexusError("nothing to remember: the text is empty", hint="pass the text to add")
    _refuse_breakers(lines)
    clean = [t.strip().lstrip("#") for t in tags if t.strip()]
    bad = [t for t in clean if not _TAG.match(t)]
    if bad:
        raise NexusError(
            f"invalid tag(s): {', '.join(bad)}",
            hint="tags start with a letter and use letters, digits, - and _",
        )
    suffix = "".join(f" #{t}" for t in clean)
    if _FENCE.match(lines[0]):
        # After `- date: ` a fence is no fence to the readers, but its closing line is.
        lines = ["", *lines]
    head = f"- {when.date().isoformat()}: {lines[0]}".rstrip()
    # Relative indentation is kept, so code in an entry (a crystallized solution) survives.
    rest = [f"  {line}" if line else "" for line in lines[1:]]
    if rest and _FENCE.match(rest[-1]) and suffix:
        rest.append(f"  {suffix.strip()}")  # ```` #tag` would not close the fence
    elif rest:
        rest[-1] += suffix
    else:
        head += suffix
    return "\n".join([head, *rest]) + "\n"


def _section_end(lines: list[str], title: str) -> tuple[int, int] | None:
    """(heading index, end index) of the `## title` section, matched case-insensitively."""
    in_fence = False
    start: int | None = None
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            continue
        level, name = len(match.group(1)), match.group(2).strip()
        if start is not None and level <= 2:
            return start, i
        if start is None and level == 2 and name.lower() == title.lower():
            start = i
    return None if start is None else (start, len(lines))


def _insert(text: str, title: str, entry: str) -> str:
    lines = text.split("\n")
    found = _section_end(lines, title)
    if found is None:  # the heading vanished while we waited: add it back at the end
        return text.rstrip("\n") + f"\n\n## {title}\n\n{entry}"
    _, end = found
    before = lines[:end]
    while before and not before[-1].strip():
        before.pop()
    return "\n".join([*before, "", entry.rstrip("\n"), "", *lines[end:]])


def add_memory(
    layout: RepoLayout,
    text: str,
    *,
    category: str | None = None,
    tags: Sequence[str] = (),
    daily: bool = False,
    when: datetime | None = None,
) -> Path:
    """Write one entry and return the file it went to (indexing is the caller's next step).

    Raises NexusError, writing nothing, when the file resolves outside the repository."""
    now = when or datetime.now()
    entry = format_entry(text, tags, now)
    title = (category or DEFAULT_CATEGORY).strip()
    title = title[:1].upper() + title[1:]
    if daily:
        path = ensure_daily(layout, now)
        with locked(layout.nexus_dir / "locks", path):
            _refuse_unwritable(layout.root, path)
            append_block(path, f"## {now.strftime('%H:%M')} {title.lower()}\n\n{entry}")
        return path
    path = confined(layout.root, layout.memory_file)
    with locked(layout.nexus_dir / "locks", path):
        _refuse_unwritable(layout.root, path)
        if create_exclusive(path, f"# Memory\n\n## {title}\n\n{entry}"):
            return path
        current = path.read_text(encoding="utf-8", errors="replace")
        found = _section_end(current.split("\n"), title)
        if found is None:
            append_block(path, f"## {title}\n\n{entry}")
        elif found[1] >= len(current.rstrip("\n").split("\n")):
            append_block(path, entry)
        else:
            rewrite_checked(path, lambda t: _insert(t, title, entry))
    return path
