"""The tracer and recursion: its room on the stack, and the loop a RecursionError went round.

Shipped beside tracer.py into the sandbox, which imports it from its own folder.

A snippet may lower the recursion limit (`sys.setrecursionlimit(10)`), and its code may
recurse until it overflows; the tracer must still report, and its profile hook must stay
set. The limit the snippet sets and reads is its own, with HEADROOM frames on top for the
tracer; deep in calls, the hook checks the room left and has the function it was called for
overflow first, while the hook still has room (a profile function that raises is unset).
A RecursionError's innermost frames say which functions the recursion went round (`looped`).
Standard library only: the sandbox's Python has nothing of nexusd.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

# Fewer frames than this left above a call, the hook makes the function called raise
# RecursionError itself: a profile function that raises is unset, so the code must overflow
# before the hook does, or the rest of its statement goes untraced. Over 50: after one
# RecursionError, Python 3.8 raises none until the stack is 50 frames below the limit
# again, and the hook's next check must get its own.
HOOK_ROOM = 60
# Frames the tracer keeps on top of the recursion limit the snippet sets (or has by default):
# its own below the snippet's first, its hook's above the snippet's deepest and its report's
# after a statement. The snippet then has about the room it asked for, as at a prompt.
HEADROOM = HOOK_ROOM + 10
# The hook checks the room left only this deep in calls (or a third of the limit, if less).
DEEP_CALLS = 200


class Limit:
    """The recursion limit as the snippet sees it: HEADROOM frames under what is set."""

    def __init__(self) -> None:
        self._set = sys.setrecursionlimit
        self._get = sys.getrecursionlimit
        # From this many calls above `run`'s frame on, calls check the room left for the
        # hook: a third of the limit, as a frame can take up to three of it (the C calls a
        # call goes through count too, up to Python 3.11), and at most DEEP_CALLS (from
        # 3.12, C calls have a limit of their own, which no setting raises).
        self.deep = 0
        # Calls up to this depth need no check (the last one found room for more), until the
        # stack is back below `below` (frames in place of those there may take more).
        self.unchecked = 0
        self.below = 0

    def install(self) -> None:
        """Add the tracer's room to the limit, and have the snippet set and read its own."""
        self._apply(self._get() + HEADROOM)
        sys.setrecursionlimit = self.setrecursionlimit
        sys.getrecursionlimit = self.getrecursionlimit

    def setrecursionlimit(self, limit: int, /) -> None:
        """`sys.setrecursionlimit` for the snippet: its limit, and the tracer's room on top."""
        if isinstance(limit, int) and limit >= 1:  # else the error it would raise unwrapped
            limit += HEADROOM
        self._apply(limit)

    def getrecursionlimit(self) -> int:
        """`sys.getrecursionlimit` for the snippet: the limit it set (or the default)."""
        return max(self._get() - HEADROOM, 1)

    def floor(self) -> None:
        """Give the tracer its room back if the limit was lowered around the wrapper (by C
        code): the report after a statement needs it."""
        if self._get() <= HEADROOM:
            self._apply(HEADROOM + 1)

    def room(self, frame: FrameType) -> int:
        """How many calls deeper than `frame`, just called, the room is checked again; -1
        when fewer than HOOK_ROOM frames are left above the hook: `frame` then raises
        RecursionError at its first line, as a call a little deeper would."""
        # With twice the room, the next calls (up to three frames of it each) leave enough.
        for needed, ahead in ((2 * HOOK_ROOM, HOOK_ROOM // 3), (HOOK_ROOM, 0)):
            try:
                _climb(needed)
                repr(_NESTED[needed])
            except RecursionError:
                continue
            return ahead
        frame.f_trace = _overflow
        if sys.gettrace() is None:
            # A frame's own trace function runs only while there is a global one; raising,
            # it unsets that one (not the profile function) and the frame's.
            sys.settrace(_untraced)
        return -1

    def _apply(self, limit: int) -> None:
        self._set(limit)
        self.deep = min(max(self._get() - HOOK_ROOM, 0) // 3, DEEP_CALLS)
        self.unchecked = self.below = 0


def _climb(n: int) -> int:
    return _climb(n - 1) if n else 0


def _nested(n: int) -> list[Any]:
    nested: list[Any] = []
    for _ in range(n):
        nested = [nested]
    return nested


# Printed, each level is a C call: from Python 3.12, C calls have their own limit.
_NESTED = {n: _nested(n) for n in (HOOK_ROOM, 2 * HOOK_ROOM)}


def _overflow(frame: FrameType, event: str, arg: object) -> None:
    """The trace function of a frame called with too little room left: it overflows."""
    raise RecursionError("maximum recursion depth exceeded")


def _untraced(frame: FrameType, event: str, arg: object) -> None:
    """The global trace function while a frame's `_overflow` is due: traces nothing."""
    return None


# A RecursionError's stack: the innermost frames read, and how often a function must recur
# among them to be part of the recursion rather than the way into it.
CYCLE_FRAMES = 300
CYCLE_REPEATS = 3


def looped(exc: BaseException, where: Callable[[str], str | None]) -> list[tuple[str, int, str]]:
    """(path, first line, name) of the functions that recur among the innermost frames of a
    RecursionError, most often first, in files `where` gives a path for: the recursion
    itself, not the calls that led into it (each is there once). The RecursionError is the
    one raised, or the one it was raised from or while handling: a library's `raise
    ValueError(...) from e`, or a RecursionError raised anew by a shallower frame, keeps the
    deep one's stack only there."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, RecursionError):
            found = _recurring(cause, where)
            if found:
                return found
        cause = cause.__cause__ or cause.__context__
    return []


def _recurring(
    exc: BaseException, where: Callable[[str], str | None]
) -> list[tuple[str, int, str]]:
    codes = []
    tb = exc.__traceback__
    while tb is not None:
        codes.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    # Innermost first: of functions recurring alike, those nearest the error are kept.
    window = codes[-CYCLE_FRAMES:][::-1]
    counts: dict[Any, int] = {}
    spans: dict[Any, tuple[int, int]] = {}  # innermost and outermost place in the window
    for i, code in enumerate(window):
        counts[code] = counts.get(code, 0) + 1
        spans[code] = (spans.get(code, (i, i))[0], i)
    recurring = [code for code, n in counts.items() if n >= CYCLE_REPEATS]
    if not recurring:
        return []
    # The loop is what recurs alongside the function spread widest: not a helper a step of it
    # called that the limit caught recursing a few levels (all of it inside the last step),
    # nor one that recursed on the way in (all of it outside the loop).
    inner, outer = max((spans[code] for code in recurring), key=lambda span: span[1] - span[0])
    found = []
    for code in sorted(recurring, key=lambda code: -counts[code]):
        first, last = spans[code]
        if first > outer or last < inner or code.co_name.startswith("<"):
            continue
        path = where(code.co_filename)
        if path is not None:
            found.append((path, code.co_firstlineno, code.co_name))
    return found
