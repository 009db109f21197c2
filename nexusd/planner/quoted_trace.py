"""A bug report's pasted traceback as the plan's first place to look.

A report that quotes a traceback has done the diagnostic a plan would otherwise ask for
("capture the full traceback"): its innermost frame in one of the ranked files is where
the search starts. The frame's path is the reporter's (`…/site-packages/pkg/mod.py`) and so
are its line numbers: the file is matched by the longest common ending of at least two
path parts, and the line is said to be the reporter's unless a listed unit holds it.
"""

from __future__ import annotations

from nexusd.code.query import TRACEBACK_HEADER, Frame, mine
from nexusd.code.rank import FileHit
from nexusd.context.librarian import ContextBundle
from nexusd.planner.actions import Action

# A frame's path must end in this many parts of a file's: `core.py` alone is any core.py.
MIN_PARTS = 2


def quoted_frames(goal: str) -> tuple[Frame, ...] | None:
    """The frames of the traceback a goal quotes: () when none is in a format read here
    (IPython's `<ipython-input-3-…>`), None when it quotes no traceback."""
    frames = mine(goal).frames
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
    named = frame.function if frame.function.isidentifier() else ""
    where = f"`{named}` in `{path}`" if named else f"`{path}`"
    outer = innermost(frames[:depth], list(hits)) is not None
    then = ", then the frames that called it," if outer else ""
    return Action(
        "Start from the quoted traceback",
        (path,),
        f"The request's traceback ends in this repository at {where}, "
        f"{_line(hits[path], frame)}: read that code{then} and find where the value that "
        "fails comes from.",
        "you can say which frame first gets a wrong value, and why",
        "diagnose",
    )


def innermost(frames: tuple[Frame, ...], paths: list[str]) -> tuple[str, int] | None:
    """The innermost frame in one of `paths` (ranked files, best first), with the index of
    the frame: the path sharing the longest ending with it, the better ranked on a tie."""
    for depth in range(len(frames) - 1, -1, -1):
        parts = frames[depth].path.split("/")
        if len(parts) < MIN_PARTS:
            continue
        best, shared = None, MIN_PARTS - 1
        for path in paths:
            n = _shared_ending(parts, path.split("/"))
            if n > shared:
                best, shared = path, n
        if best is not None:
            return best, depth
    return None


def _shared_ending(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _line(hit: FileHit, frame: Frame) -> str:
    """Where the frame is: its line when a listed unit of that name holds it here, else the
    reporter's line and where the function starts in this checkout when it is listed."""
    units = [u for u in hit.units if frame.function and u.qualname.split(".")[-1] == frame.function]
    if any(u.start <= frame.line <= u.end for u in units):
        return f"line {frame.line}"
    said = f"line {frame.line} of the reporter's version"
    return f"{said} (here it starts at line {units[0].start})" if units else said
