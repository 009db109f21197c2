"""A bug report's pasted traceback as the plan's first place to look.

A report that quotes a traceback has done the diagnostic a plan would otherwise ask for
("capture the full traceback"): its innermost frame in one of the ranked files is where
the search starts. The frame's path is the reporter's (`…/site-packages/pkg/mod.py`, a
checkout of their own) and so are its line numbers: a file matches when one path is the
other's ending (two parts or more; below `site-packages/` the whole import path), and
the line is said to be the reporter's, beside where the function starts here.
"""

from __future__ import annotations

import re

from nexusd.code.query import TRACEBACK_HEADER, Frame, frame_function, mine
from nexusd.code.rank import FileHit
from nexusd.code.units import at_line
from nexusd.context.librarian import ContextBundle
from nexusd.planner.actions import Action
from nexusd.protocol.inline import inline_code

# A frame's path must end in this many parts of a file's: `core.py` alone is any core.py.
MIN_PARTS = 2
_INSTALLED = frozenset({"site-packages", "dist-packages"})
# What Python prints between chained tracebacks, the cause's first.
_CHAINED = re.compile(
    r"The above exception was the direct cause of the following exception"
    r"|During handling of the above exception, another exception occurred"
)


def quoted_frames(goal: str) -> tuple[Frame, ...] | None:
    """The frames of the traceback a goal quotes: () when none is in a format read here
    (IPython's `<ipython-input-3-…>`), None when it quotes no traceback. Of chained
    tracebacks (`raise … from`, an error while handling another), the first one's frames
    come last, where the innermost frame is looked for first: it is the cause."""
    chain = _CHAINED.split(goal)
    frames = tuple(f for part in reversed(chain) for f in mine(part).frames)
    return frames if frames or TRACEBACK_HEADER.search(goal) else None


def trace_action(bundle: ContextBundle, frames: tuple[Frame, ...]) -> Action | None:
    """The step that starts from the request's traceback, or None when none of its frames
    is in a ranked file (the reporter's own script, the standard library)."""
    hits = {hit.path: hit for hit in bundle.code_hits}
    found = innermost(frames, list(hits))
    if found is None:
        return None
    path, depth = found
    frame = frames[depth]
    named = frame_function(frames, depth)
    where = f"{inline_code(named)} in {inline_code(path)}" if named else inline_code(path)
    outer = innermost(frames[:depth], list(hits)) is not None
    then = ", then the frames that called it," if outer else ""
    return Action(
        "Start from the quoted traceback",
        (path,),
        f"The request's traceback ends in this repository at {where}, "
        f"{_line(hits[path], frame, named)}: read that code{then} and find where the value "
        "that fails comes from.",
        "you can say which frame first gets a wrong value, and why",
        "diagnose",
    )


def innermost(frames: tuple[Frame, ...], paths: list[str]) -> tuple[str, int] | None:
    """The innermost frame in one of `paths` (ranked files, best first), with the index of
    the frame: the path sharing the longest ending with it, the better ranked on a tie."""
    for depth in range(len(frames) - 1, -1, -1):
        parts, installed = _reporters(frames[depth].path)
        if len(parts) < MIN_PARTS:
            continue
        best, shared = None, MIN_PARTS - 1
        for path in paths:
            ours = path.split("/")
            n = _shared_ending(parts, ours)
            # One must be the other's ending, and an installed module's whole import path
            # ours: `docutils/parsers/rst/directives/__init__.py` shares two parts with
            # `sphinx/directives/__init__.py` and is not it.
            whole = len(parts) if installed else min(len(parts), len(ours))
            if n > shared and n == whole:
                best, shared = path, n
        if best is not None:
            return best, depth
    return None


def _reporters(path: str) -> tuple[list[str], bool]:
    """A frame path's parts (below an installed package's folder, its import path only),
    and whether it was installed."""
    parts = path.split("/")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _INSTALLED:
            return parts[i + 1 :], True
    return parts, False


def _shared_ending(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _line(hit: FileHit, frame: Frame, function: str) -> str:
    """The frame's line, which is the reporter's (their version may differ from this
    checkout), and where its function starts here when the function is a listed unit: of
    several of that name (`Field._bind_to_schema`, `DateTime._bind_to_schema`), the one
    holding the line, else the nearest starting above it."""
    said = f"line {frame.line} of the reporter's traceback"
    units = [u for u in hit.units if function and u.qualname.split(".")[-1] == function]
    if not units:
        return said
    unit = at_line(units, frame.line)
    named = unit.qualname if len(units) > 1 else function
    return f"{said} ({inline_code(named)} starts at line {unit.start} here)"
