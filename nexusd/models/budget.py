"""One time box for a whole answer, and what is left of it for the model.

`planner.timeout_ms` is the budget of the whole answer, counted from when the answer
started: for `nexusd plan` the start of the command (the process), for the daemon the
moment it picked the request up. Reading the request, imports, the code index and the
checks spend it too, so a client that waits `planner.timeout_ms` gets its answer. The
model calls (the librarian's rerank, the architect's plan and its repair round) get
what remains, less a small reserve for rendering and writing the response; when nothing
remains the model is not asked at all and the offline plan says why. A context variable
carries the budget, so phases run in worker threads share it when started with
`contextvars.copy_context().run`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

# Kept back from the model for what follows its answer: rendering and writing the
# response, the telemetry line, the process's exit (tens of milliseconds when quiet).
RESERVE_S = 0.3
# Less than this cannot hold a model call (the retry loop gives up at 0.05 s anyway).
MIN_CALL_S = 0.1
HOW_TO_RAISE = (
    "raise planner.timeout_ms in .nexus/config.yaml (the budget of the whole answer),"
    " or keep a daemon running (`nexusd start`) so a plan does not pay for start-up"
)


@dataclass(frozen=True)
class AnswerStart:
    """The `time.monotonic()` instant an answer started, and what started it."""

    at: float
    origin: str = "the answer started"

    @classmethod
    def now(cls, origin: str) -> AnswerStart:
        """An answer starting now."""
        return cls(time.monotonic(), origin)

    @classmethod
    def process(cls) -> AnswerStart:
        """An answer that started with this process (a CLI command)."""
        return cls(time.monotonic() - process_age(), "the command started")

    @classmethod
    def command(cls) -> AnswerStart:
        """The start of a CLI command: its process's when the process was started to run
        nexusd, else now (a command run inside a test runner or another program, whose
        earlier life is not this answer's)."""
        launched = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
        if launched.name == "nexusd" or launched.parts[-2:] == ("nexusd", "__main__.py"):
            return cls.process()
        return cls.now("the command started")

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.at


def process_age() -> float:
    """Seconds since this process started (from /proc; 0 where it cannot be read)."""
    try:
        # The name (field 2) may hold spaces and parentheses: count from its end.
        fields = Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: ticks since boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    # A clock tick is 10 ms; a process older than a minute was not started for this answer.
    return age if 0.0 < age < 60.0 else 0.0


class ModelBudget:
    """`seconds` for the whole answer from `start`; the model gets what is left of it."""

    def __init__(self, seconds: float, start: AnswerStart, reserve_s: float = RESERVE_S) -> None:
        self.seconds = seconds
        self.start = start
        self.ends = start.at + seconds - reserve_s

    def left(self) -> float:
        """Seconds left for model calls; never negative."""
        return max(0.0, self.ends - time.monotonic())

    def spent(self) -> bool:
        """True when too little is left to ask a model at all."""
        return self.left() < MIN_CALL_S

    def spent_note(self) -> str:
        """The warning for an answer whose budget ran out before the model could be asked."""
        return (
            f"planner.timeout_ms ({self.seconds:g} s) was spent before the model could be"
            f" asked: {self.start.elapsed():.1f} s had passed since {self.start.origin}"
            f" (start-up, context, checks); answered with the offline planner; {HOW_TO_RAISE}"
        )


_BUDGET: ContextVar[ModelBudget | None] = ContextVar("nexusd_model_budget", default=None)


@contextlib.contextmanager
def model_budget(seconds: float, start: AnswerStart | None = None) -> Iterator[ModelBudget]:
    """Every model call inside the block ends within `seconds` of `start` (default: now)."""
    budget = ModelBudget(seconds, start or AnswerStart.now("the answer started"))
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def current_budget() -> ModelBudget | None:
    """The budget of the answer in progress (None outside one)."""
    return _BUDGET.get()


def budget_left() -> float | None:
    """Seconds left of the current budget for model calls (None outside one)."""
    budget = _BUDGET.get()
    return None if budget is None else budget.left()
