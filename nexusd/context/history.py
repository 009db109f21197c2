"""The previous cycle: which response it was, what it planned, how it ended.

Without a `history_path`, a request continues only a response of its own lineage
(cycle n - 1) or one about a clearly related goal; never an error response, and
never merely the newest file of the folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexusd.context.artifacts import resolve_inside
from nexusd.context.keywords import keywords
from nexusd.protocol.inline import inline_code

RESPONSE_SUFFIX = "_plan_response.md"
MAX_HISTORY_BYTES = 1_048_576
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_NUMBERED = re.compile(r"^\s{0,3}(\d+)[.)]\s+(.*\S)")
_CHECKBOX = re.compile(r"^\s*[-*]\s+\[([ xX])\]\s+(.*\S)")
_PLAN_TITLES = ("plan", "task breakdown", "action", "steps")
_TITLE = re.compile(r"^#\s+(?:Plan(?:\s+for\s+cycle\s+\d+)?\s*:\s*)?(.+?)\s*$", re.MULTILINE)
# Responses read when looking for the previous cycle, newest first, and how much of each.
MAX_SCANNED = 200
HEAD_BYTES = 65_536
# Two goals are related when they share at least two content words and this share of
# the shorter one's: "click.prompt crash" and "prompt crash on empty input" are; two
# goals that only name the project are not.
RELATED_SHARE = 0.5


@dataclass(frozen=True)
class PreviousCycle:
    """The response of the cycle before this one, summarised."""

    path: str  # repository-relative
    source: str  # "history_path", or why an older response of the folder was chosen
    cycle: int | None
    status: str | None
    planner: str | None
    actions: tuple[str, ...]
    checklist: tuple[tuple[bool, str], ...]
    note: str = ""


def _strip_md(text: str) -> str:
    return re.sub(r"\*\*|`", "", text).strip()


def summarize_response(text: str) -> tuple[tuple[str, ...], tuple[tuple[bool, str], ...]]:
    """The numbered actions of the plan-like section and the checklist items of a response."""
    actions: list[str] = []
    fallback: list[str] = []
    checklist: list[tuple[bool, str]] = []
    in_plan = False
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).lower()
            in_plan = any(word in title for word in _PLAN_TITLES) and "next" not in title
            continue
        numbered = _NUMBERED.match(line)
        if numbered:
            (actions if in_plan else fallback).append(_strip_md(numbered.group(2))[:200])
        box = _CHECKBOX.match(line)
        if box:
            checklist.append((box.group(1) != " ", _strip_md(box.group(2))[:200]))
    return tuple(actions or fallback), tuple(checklist)


def _safe_key(order_key: Callable[[str], Any], name: str) -> Any:
    """`order_key(name)`, or None when the name defeats it (one odd name, say a timestamp
    out of datetime's range, must not stop the answer to any other request)."""
    try:
        return order_key(name)
    except (OverflowError, ValueError):
        return None


def _older_responses(
    folder: Path, request_name: str, order_key: Callable[[str], Any]
) -> list[Path]:
    mine = _safe_key(order_key, request_name)
    if mine is None:
        return []  # no place in the folder's order: no response is older than it
    found: list[tuple[Any, str, Path]] = []
    own_response = request_name.replace("_plan_request.md", RESPONSE_SUFFIX)
    for path in folder.glob(f"*{RESPONSE_SUFFIX}"):
        if path.name == own_response or path.name.startswith("."):
            continue
        key = _safe_key(order_key, path.name)
        if key is not None and key < mine:
            found.append((key, path.name, path))
    found.sort(key=lambda item: (item[0], item[1]))
    return [path for _, _, path in found]


def response_goal(text: str) -> str:
    """The goal a response answered, from its title (`# Plan for cycle 3: <goal>`)."""
    match = _TITLE.search(text)
    return match.group(1).strip() if match else ""


def related(goal: str, other: str) -> tuple[str, ...]:
    """The content words two goals share when they clearly share a subject, else ()."""
    mine, theirs = set(keywords(goal)), set(keywords(other))
    shared = mine & theirs
    if len(shared) < 2 or len(shared) < RELATED_SHARE * min(len(mine), len(theirs)):
        return ()
    return tuple(w for w in keywords(goal) if w in shared)


@dataclass(frozen=True)
class Lineage:
    """What the request says about where it comes from: its cycle and goals."""

    cycle: int | None = None
    goal: str = ""
    previous_goal: str = ""


def _why_previous(text: str, meta: dict[str, Any] | None, lineage: Lineage) -> str:
    """Why the response `text` is this request's previous cycle ('' when it is not)."""
    meta = meta or {}
    if meta.get("status") == "error":
        return ""  # an error answered nothing: there is no plan to continue
    theirs = meta.get("cycle")
    theirs = theirs if isinstance(theirs, int) and not isinstance(theirs, bool) else None
    mine = lineage.cycle
    if mine is not None and theirs is not None:
        if theirs == mine - 1:
            return f"cycle {theirs}, the cycle before this one"
        if theirs >= mine:
            return ""
    goal = response_goal(text)
    if not goal:
        return ""
    if lineage.previous_goal and (shared := related(lineage.previous_goal, goal)):
        return f"its goal is this request's previous goal (shares {', '.join(shared[:4])})"
    if lineage.goal and (shared := related(lineage.goal, goal)):
        return f"a related goal (shares {', '.join(shared[:4])})"
    return ""


def _read_head(root: Path, path: Path, max_bytes: int, *, inside_links: bool) -> bytes | str:
    """The first `max_bytes` of a regular file inside `root`, or why it was not read."""
    # Never a FIFO (it blocked the answer, and the daemon's queue, forever), a device or a
    # file outside the repository, whatever an older response's name says.
    from nexusd.code.reader import read_inside

    return read_inside(root, path, max_bytes, head=True, inside_links=inside_links)


def _exists(path: Path) -> bool:
    try:
        return path.expanduser().exists()
    except (OSError, RuntimeError):  # RuntimeError: `~user` unknown
        return False


def find_previous(
    root: Path,
    request_path: Path,
    history_path: str | None,
    order_key: Callable[[str], Any],
    *,
    lineage: Lineage | None = None,
    meta_reader: Callable[[str], dict[str, Any] | None] = lambda _text: None,
) -> tuple[Path | None, str, str]:
    """(path, how it was found, note): history_path when present, else the newest older
    response of the same lineage (cycle n - 1) or about a clearly related goal, never an
    error response."""
    note = ""
    if history_path and history_path.strip().lower() not in ("none", "n/a", "-"):
        wanted = Path(history_path.strip().strip("`'\""))
        reasons: list[str] = []
        refused_existing = ""
        for base in (root, request_path.parent):
            resolved, reason = resolve_inside(root, str(base / wanted))
            if resolved is None:
                reasons.append(reason)
                # A file that is there but outside is refused, not missing: say so.
                if not refused_existing and _exists(base / wanted):
                    refused_existing = reason
            elif resolved.is_file():
                return resolved, "history_path", ""
        if len(reasons) == 2 or refused_existing:
            note = f"history_path {inline_code(history_path)} {refused_existing or reasons[0]}"
        else:
            note = f"history_path {inline_code(history_path)} does not exist"
    older = _older_responses(request_path.parent, request_path.name, order_key)
    for path in reversed(older[-MAX_SCANNED:]):
        # Links are skipped: a response nexusd or a client wrote is a regular file.
        head = _read_head(root, path, HEAD_BYTES, inside_links=False)
        if isinstance(head, str):
            continue
        text = head.decode("utf-8", "replace")
        why = _why_previous(text, meta_reader(text), lineage or Lineage())
        if why:
            return path, f"newest older response in the folder: {why}", note
    return None, "", note


def read_previous(
    root: Path,
    path: Path,
    source: str,
    meta_reader: Callable[[str], dict[str, Any] | None],
    note: str = "",
) -> PreviousCycle:
    """Read and summarise a previous response (its front matter via `meta_reader`)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
        real = path
    if not real.is_relative_to(root.resolve()):
        note = "; ".join(n for n in (note, "resolves outside the repository (not read)") if n)
        return PreviousCycle(path.as_posix(), source, None, None, None, (), (), note=note)
    rel = real.relative_to(root.resolve()).as_posix()
    # `history_path` was resolved already: a link to a file inside the repository is fine.
    data = _read_head(root, real, MAX_HISTORY_BYTES, inside_links=True)
    if isinstance(data, str):
        note = "; ".join(n for n in (note, data) if n)
        return PreviousCycle(rel, source, None, None, None, (), (), note=note)
    text = data.decode("utf-8", "replace")
    meta = meta_reader(text) or {}
    actions, checklist = summarize_response(text)
    cycle = meta.get("cycle")
    return PreviousCycle(
        path=rel,
        source=source,
        cycle=cycle if isinstance(cycle, int) else None,
        status=str(meta["status"]) if meta.get("status") else None,
        planner=str(meta["planner"]) if meta.get("planner") else None,
        actions=actions,
        checklist=checklist,
        note=note,
    )
