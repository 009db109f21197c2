"""Retries with backoff and jitter, a circuit breaker per provider, and a hard deadline.

Seed 001 section 5.2: transient errors (timeouts, 429, 5xx) are retried with
exponential backoff; a provider that keeps failing is left alone for a while
(the breaker opens, then half-opens to let one trial through); and the caller
degrades to the offline planner with a clear notice. No call outlives the
request's time box.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from nexusd.models.base import (
    Completion,
    ModelCall,
    Provider,
    ProviderError,
    ProviderTimeout,
)

BreakerState = Literal["closed", "open", "half_open"]
Clock = Callable[[], float]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a transient failure."""

    max_retries: int = 2
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def delay(self, retry: int, rng: random.Random) -> float:
        """Backoff before retry `retry` (0-based): half fixed, half random ("equal jitter")."""
        ceiling: float = min(self.max_delay_s, self.base_delay_s * 2.0**retry)
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


class Deadline:
    """A point in time after which no more work starts."""

    def __init__(self, seconds: float, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self.at = clock() + seconds

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self.at - self._clock())

    @property
    def expired(self) -> bool:
        """True once the deadline has passed."""
        return self.remaining() <= 0.0


class CircuitBreaker:
    """Opens after `failure_threshold` consecutive failures; half-opens after `reset_s`."""

    def __init__(
        self, failure_threshold: int = 3, reset_s: float = 30.0, clock: Clock = time.monotonic
    ) -> None:
        self.failure_threshold = max(1, failure_threshold)
        self.reset_s = reset_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_running = False

    @property
    def state(self) -> BreakerState:
        """closed (calls flow), open (calls refused) or half_open (one trial allowed)."""
        with self._lock:
            return self._state()

    def _state(self) -> BreakerState:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self.reset_s:
            return "half_open"
        return "open"

    def retry_after(self) -> float:
        """Seconds until an open breaker half-opens (0 when not open)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.reset_s - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """Whether a call may go out now; in half-open state only one trial at a time."""
        with self._lock:
            state = self._state()
            if state == "closed":
                return True
            if state == "half_open" and not self._trial_running:
                self._trial_running = True
                return True
            return False

    def record_success(self) -> None:
        """A call succeeded: close the breaker."""
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_running = False

    def record_failure(self) -> None:
        """A call failed: count it, and open (again) at the threshold or after a failed trial."""
        with self._lock:
            self._failures += 1
            if self._trial_running or self._failures >= self.failure_threshold:
                self._opened_at = self._clock()
            self._trial_running = False


class BreakerBoard:
    """One breaker per provider name, shared by every request of a process."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._breakers: dict[str, CircuitBreaker] = {}

    def get(self, name: str, failure_threshold: int = 3, reset_s: float = 30.0) -> CircuitBreaker:
        """The breaker for provider `name`, created on first use."""
        with self._lock:
            if name not in self._breakers:
                self._breakers[name] = CircuitBreaker(failure_threshold, reset_s, self._clock)
            return self._breakers[name]


BREAKERS = BreakerBoard()


@dataclass(frozen=True)
class Outcome:
    """What a reliable call produced: a completion, or the last error; and the retries spent."""

    completion: Completion | None
    error: ProviderError | None
    retries: int
    attempts: int


def call_reliably(
    provider: Provider,
    call: ModelCall,
    *,
    policy: RetryPolicy,
    breaker: CircuitBreaker,
    deadline: Deadline,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> Outcome:
    """Call `provider` with retries, the breaker and the deadline; never raises ProviderError."""
    rng = rng or random.Random()
    name = provider.settings.name
    retries = 0
    attempts = 0
    error: ProviderError | None = None
    while True:
        if not breaker.allow():
            error = ProviderError(
                f"circuit open for provider `{name}` after repeated failures; "
                f"next trial in {breaker.retry_after():.0f}s"
            )
            return Outcome(None, error, retries, attempts)
        left = deadline.remaining()
        if left <= 0.05:
            # After failed tries, what went wrong is theirs (a refused connection is "down"
            # however long the retries took); with none, the time was simply too short.
            if attempts == 0:
                error = ProviderTimeout(f"provider `{name}`: the time box ran out")
            return Outcome(None, error, retries, attempts)
        attempts += 1
        try:
            completion = provider.complete(replace(call, timeout_s=min(call.timeout_s, left)))
        except ProviderError as exc:
            error = exc
        except Exception as exc:  # a third-party provider's bug must not crash the planner
            error = ProviderError(f"provider `{name}` crashed: {type(exc).__name__}: {exc}")
        else:
            breaker.record_success()
            return Outcome(completion, None, retries, attempts)
        breaker.record_failure()
        if not error.retryable or retries >= policy.max_retries:
            return Outcome(None, error, retries, attempts)
        pause = policy.delay(retries, rng)
        if pause >= deadline.remaining():
            return Outcome(None, error, retries, attempts)
        sleep(pause)
        retries += 1
