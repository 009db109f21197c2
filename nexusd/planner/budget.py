"""One time box for every model call made while answering one request.

`planner.timeout_ms` bounds a whole answer's model work, not each call: the
librarian's rerank and the architect's plan (and its repair round) share it. The
pipeline opens the budget; its clock starts with the first model call (reading the
request, indexing code and running checks are not model time), and `RoutedModel`
never gets a deadline past what is left. A context variable carries it, so phases
that run in worker threads share it when started with `contextvars.copy_context().run`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar


class ModelBudget:
    """`seconds` of model time, counted from the first call that asks what is left."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._ends: float | None = None

    def left(self) -> float:
        """Seconds left (starting the clock on first use); never negative."""
        with self._lock:
            now = time.monotonic()
            if self._ends is None:
                self._ends = now + self.seconds
            return max(0.0, self._ends - now)

    @property
    def started(self) -> bool:
        """Whether a model call has started the clock."""
        return self._ends is not None


_BUDGET: ContextVar[ModelBudget | None] = ContextVar("nexusd_model_budget", default=None)


@contextlib.contextmanager
def model_budget(seconds: float) -> Iterator[ModelBudget]:
    """Every model call inside the block ends within `seconds` of the first one's start."""
    budget = ModelBudget(seconds)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def budget_left() -> float | None:
    """Seconds left of the current budget (None outside one)."""
    budget = _BUDGET.get()
    return None if budget is None else budget.left()
