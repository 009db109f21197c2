"""The range of every numeric configuration key: what its users can hold, said when it loads.

Without these, `watch.rescan_seconds: 1e20`-sized values passed validation and ended the
daemon at start with an OverflowError from the scheduler, `memory.chunk_max_chars: 0`
indexed no memory at all without a word, `.nan` or `.inf` reached the sandbox, and counts
and sizes were bounded only by 64 bits (`planner.max_context_tokens: 1000000000000000000`,
`sandbox.pids: 9223372036854775807`). Each key now has its own range in `RANGES`, a key
without one is a test failure (`tests/config/test_ranges.py`), and a value outside it is a
ConfigError naming the key and the range.

The rules the table follows: a duration may be up to a year (by its key's unit), a number
of days up to a century; a count or size is bounded by what its user can hold or use with
room to spare (a process count by Linux's pid limit, a body or file held in memory by a
size that fits one); zero is allowed only where it means something (`0 = off`, `0 = no
limit`, `0 = one per core`: the template says which) and floats are finite.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from nexusd.errors import ConfigError

YEAR_SECONDS = 366 * 24 * 3600
YEAR_MS = YEAR_SECONDS * 1000
CENTURY_DAYS = 36_600
MIB = 1024**2
GIB = 1024**3
PID_MAX = 4_194_304  # Linux's PID_MAX_LIMIT: no system runs more processes
MAX_CPUS = 1024
MAX_THREADS = 1024


class Range(NamedTuple):
    """The values a numeric key takes: `low` (excluded when `above`) to `high`."""

    low: float
    high: float
    above: bool = False  # a float that must be more than `low` (cpus: 0.5, never 0)
    note: str = ""  # the range in words, for the fix (`a year`, `1 GiB`, why its floor)


A_YEAR_MS = Range(0, YEAR_MS, note="a year in milliseconds")
MILLIS = Range(1, YEAR_MS, note="a year in milliseconds")

RANGES: dict[str, Range] = {
    "version": Range(1, 1),  # the only format there is
    # watch: how long a request's writer is given, and how many requests wait.
    "watch.debounce_ms": A_YEAR_MS,
    "watch.settle_ms": A_YEAR_MS,
    "watch.write_grace_ms": A_YEAR_MS,
    "watch.rescan_seconds": Range(0, YEAR_SECONDS, note="a year; 0: no periodic rescan"),
    # Read whole and parsed in memory: a request is a page of markdown (default 1 MiB).
    "watch.max_request_bytes": Range(1, 64 * MIB, note="64 MiB"),
    "watch.queue_size": Range(1, 1_000_000),  # 0 was read as 1
    # planner: a plan is a review, the steps and the checks. Fewer than 3 left no step that
    # does the work (2 was a review and the checks only, read without a word).
    "planner.max_actions": Range(
        3, 100, note="the review, at least one step toward the goal, and the checks"
    ),
    "planner.max_retries": Range(0, 20),
    "planner.timeout_ms": MILLIS,
    # The largest context windows models have are about 10 million tokens.
    "planner.max_context_tokens": Range(1, 10_000_000),
    # routing: what providers accept (OpenAI's temperature is 0..2).
    "routing.*.temperature": Range(0, 2),
    "routing.*.max_tokens": Range(1, 1_000_000),
    # providers: one call's time box, the model's window, its threads and circuit breaker.
    "providers.*.timeout_ms": MILLIS,
    "providers.*.n_ctx": Range(1, 10_000_000),
    "providers.*.n_threads": Range(1, MAX_THREADS),
    "providers.*.circuit_failures": Range(1, 1000),
    "providers.*.circuit_reset_ms": MILLIS,
    # sandbox: limits no check can run under are refused (a timeout of 0 timed out at once).
    "sandbox.timeout": Range(1, YEAR_SECONDS, note="a year in seconds"),
    "sandbox.cpus": Range(0, MAX_CPUS, above=True),
    "sandbox.pids": Range(1, PID_MAX, note="Linux's pid limit"),
    "sandbox.output_limit_bytes": Range(1, 64 * MIB, note="64 MiB"),  # held in memory
    "sandbox.warm_pool": Range(0, 64),  # 0: none kept warm
    # checks: each may override the sandbox's limits; a timeout may be a fraction.
    "checks[].timeout": Range(0, YEAR_SECONDS, above=True, note="a year in seconds"),
    "checks[].cpus": Range(0, MAX_CPUS, above=True),
    "checks[].pids": Range(1, PID_MAX, note="Linux's pid limit"),
    # memory: files read whole, chunks embedded, the vectors a search keeps in memory.
    "memory.max_file_bytes": Range(1, 256 * MIB, note="256 MiB"),
    "memory.chunk_max_chars": Range(1, 100_000),
    "memory.optimize_minutes": Range(0, YEAR_SECONDS // 60, note="a year; 0: never"),
    "memory.search.k": Range(1, 100),  # as many as the API and MCP return at once
    "memory.search.rrf_k": Range(0, 10_000),
    "memory.search.depth": Range(1, 10_000),
    "memory.search.vector_weight": Range(0, 100),
    "memory.search.keyword_weight": Range(0, 100),
    "memory.search.recency_half_life_days": Range(0, CENTURY_DAYS, note="a century; 0: off"),
    # 2 million vectors of 384 floats are 3 GB; 0 turns the cache off.
    "memory.search.cache_max_rows": Range(0, 2_000_000),
    # code: files read whole and parsed; how many are indexed and listed; parser processes.
    "code.max_file_bytes": Range(1, 256 * MIB, note="256 MiB"),
    "code.max_files": Range(1, 10_000_000),
    "code.max_results": Range(1, 100),
    "code.workers": Range(0, MAX_THREADS),  # 0: one per core
    "code.reproduce.timeout": Range(1, YEAR_SECONDS, note="a year in seconds"),
    # checkpoint: 0 takes untracked files of any size.
    "checkpoint.max_untracked_file_bytes": Range(0, 64 * GIB, note="64 GiB; 0: no limit"),
    "checkpoint.retention.keep_last": Range(0, 1_000_000),
    "checkpoint.retention.keep_days": Range(0, CENTURY_DAYS, note="a century"),
    # api: a TCP port; a body is read whole into memory before it is parsed.
    "api.port": Range(1, 65_535),
    "api.max_body_bytes": Range(1, 64 * MIB, note="64 MiB"),
}

_CHECK_KEY = re.compile(r"checks\[\d+\]\.(\w+)")


def range_of(dotted: str) -> Range:
    """The range of the numeric key `dotted` (`routing.critic.temperature`, `checks[2].pids`)."""
    check = _CHECK_KEY.fullmatch(dotted)
    parts = dotted.split(".")
    if check is not None:
        key = f"checks[].{check.group(1)}"
    elif parts[0] in ("routing", "providers") and len(parts) >= 3:
        # Any role, any provider name, dots included (`providers.llama3.2.timeout_ms`).
        key = f"{parts[0]}.*.{parts[-1]}"
    else:
        key = dotted
    try:
        return RANGES[key]
    except KeyError:
        raise KeyError(f"{key} has no range: add one to RANGES in {__name__}") from None


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def wanted(dotted: str, *, whole: bool) -> str:
    """What a value of `dotted` must be, in words: `a whole number ≥ 0 and ≤ 31622400`."""
    low, high, above, _ = range_of(dotted)
    if low == high:
        return _number(low)
    kind = "a whole number" if whole else "a number"
    return f"{kind} {'>' if above else '≥'} {_number(low)} and ≤ {_number(high)}"


def in_range(dotted: str, value: float) -> bool:
    """Whether `value` is finite and within the range of `dotted`."""
    low, high, above, _ = range_of(dotted)
    # An int is compared as it is: math.isfinite turns it into a float, which overflows.
    if not isinstance(value, int) and not math.isfinite(value):
        return False
    return (low < value if above else low <= value) and value <= high


def range_error(origin: str, dotted: str, value: object, *, whole: bool) -> ConfigError:
    """`<file>: `key` must be <range>, got <value>`, with the fix and what the top means."""
    want = wanted(dotted, whole=whole)
    note = range_of(dotted).note
    return ConfigError(
        f"{origin}: `{dotted}` must be {want}, got {value!r}",
        hint=f"set `{dotted}` to {want}" + (f" ({note})" if note else ""),
    )
