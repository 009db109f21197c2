"""The range of each numeric configuration key: what its users can hold, said when it loads.

Without these, `watch.rescan_seconds: 1e20`-sized values passed validation and ended the
daemon at start with an OverflowError from the scheduler, `memory.chunk_max_chars: 0`
indexed no memory at all without a word, and `.nan` or `.inf` reached the sandbox.
A duration (by its key's unit) may be up to a year, a number of days up to a century,
any other whole number up to what a 64-bit integer holds; floats must be finite.
"""

from __future__ import annotations

import math

YEAR_SECONDS = 366 * 24 * 3600
INT64_MAX = 2**63 - 1

# Keys whose lowest useful value is not 0, or whose highest is below the unit's.
EXPLICIT: dict[str, tuple[int, int]] = {
    "api.port": (1, 65_535),
    "memory.chunk_max_chars": (1, INT64_MAX),
}


def _unit_max(dotted: str) -> int:
    """The largest value a key's unit allows (by its name: `_ms`, `_seconds`, …)."""
    name = dotted.rsplit(".", 1)[-1]
    if name.endswith("_ms"):
        return YEAR_SECONDS * 1000
    if name.endswith("_seconds") or name == "timeout":
        return YEAR_SECONDS
    if name.endswith("_minutes"):
        return YEAR_SECONDS // 60
    if name.endswith("_days"):
        return 36_600
    return INT64_MAX


def bounds(dotted: str, lowest: int = 0) -> tuple[int, int]:
    """(lowest, highest) value of the numeric key `dotted`."""
    return EXPLICIT.get(dotted, (lowest, _unit_max(dotted)))


def wanted(dotted: str, *, whole: bool, lowest: int = 0) -> str:
    """What a value of `dotted` must be, in words: `a whole number ≥ 0 and ≤ 31622400`."""
    lo, hi = bounds(dotted, lowest)
    top = "" if hi == INT64_MAX else f" and ≤ {hi}"
    return f"{'a whole number' if whole else 'a number'} ≥ {lo}{top}"


def in_range(dotted: str, value: float, lowest: int = 0) -> bool:
    """Whether `value` is finite and within the bounds of `dotted`."""
    lo, hi = bounds(dotted, lowest)
    # An int is compared as it is: math.isfinite turns it into a float, which overflows.
    return (isinstance(value, int) or math.isfinite(value)) and lo <= value <= hi
