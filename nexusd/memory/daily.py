"""Daily notes: `memory/daily/YYYY-MM-DD.md`, created from a template, appended to safely."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from nexusd.memory.safewrite import append_block, confined, create_exclusive, locked
from nexusd.paths import RepoLayout

TEMPLATE = """\
---
category: daily
date: {day}
---
# {day}

Daily note written by nexusd and by you: one entry per answered plan request,
plus anything worth remembering from the day.
"""


def daily_path(layout: RepoLayout, when: datetime) -> Path:
    """The daily note for the local date of `when`."""
    return layout.daily_dir / f"{when.date().isoformat()}.md"


def ensure_daily(layout: RepoLayout, when: datetime) -> Path:
    """Create the day's note from the template if it does not exist yet (never via a link out)."""
    path = confined(layout.root, daily_path(layout, when))
    if not path.exists():
        create_exclusive(path, TEMPLATE.format(day=when.date().isoformat()))
    return path


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_entry(
    *, when: datetime, cycle: int | None, goal: str, status: str, response_path: Path | str
) -> str:
    """The markdown of one cycle entry (its own `##` section, so it is its own chunk)."""
    label = f"cycle {cycle}" if cycle is not None else "request"
    return (
        f"## {when.strftime('%H:%M')} {label}: {status}\n\n"
        f"- goal: {_one_line(goal) or '(none)'}\n"
        f"- status: {status}\n"
        f"- response: `{response_path}`\n"
    )


def append_daily_entry(
    layout: RepoLayout,
    *,
    when: datetime,
    cycle: int | None,
    goal: str,
    status: str,
    response_path: Path | str,
) -> Path:
    """Append one answered request to the day's note; returns the note's path.

    Raises NexusError, writing nothing, when the note resolves outside the repository."""
    path = confined(layout.root, daily_path(layout, when))
    rel = response_path
    if isinstance(response_path, Path) and response_path.is_absolute():
        try:
            rel = response_path.relative_to(layout.root).as_posix()
        except ValueError:
            rel = str(response_path)
    entry = format_entry(when=when, cycle=cycle, goal=goal, status=status, response_path=rel)
    with locked(layout.nexus_dir / "locks", path):
        ensure_daily(layout, when)
        append_block(path, entry)
    return path
