"""One role's routed model for one job: reliable calls, the prompt log, summed usage."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from nexusd.models.budget import budget_left
from nexusd.models.echo import echoes_prompt
from nexusd.models.prompts import save_prompt
from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderError,
    ProviderTimeout,
    create_provider,
)
from nexusd.models.reliability import BREAKERS, BreakerBoard, Deadline, RetryPolicy, call_reliably
from nexusd.models.routing import Route
from nexusd.models.telemetry import Usage
from nexusd.paths import RepoLayout
from nexusd.readonly import is_read_only


class RoutedModel:
    """Calls `route`'s provider within `deadline_s`, retrying and tripping its breaker."""

    def __init__(
        self,
        layout: RepoLayout,
        route: Route,
        *,
        deadline_s: float,
        max_retries: int,
        breakers: BreakerBoard = BREAKERS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.layout, self.route, self.sleep = layout, route, sleep
        left = budget_left()
        self.deadline = Deadline(deadline_s if left is None else min(deadline_s, left))
        self.policy = RetryPolicy(max_retries=max_retries)
        self.breaker = breakers.get(
            route.provider.name,
            route.provider.circuit_failures,
            route.provider.circuit_reset_ms / 1000.0,
        )
        self.provider = create_provider(route.provider)
        self.usage = Usage(route.provider.name, route.model)
        self.last_error: ProviderError | None = None
        self.echoed = False  # the last answer only repeated the prompt
        self.echo_text = ""  # …and what it said

    def ask(
        self,
        messages: Sequence[Message],
        attempt: str,
        spec: Any = None,
        dropped: Sequence[str] = (),
        *,
        timeout_s: float | None = None,
        temperature: float | None = None,
    ) -> tuple[str | None, str]:
        """The model's text, or None and the reason it failed; the prompt is logged first.

        An answer that only repeats the prompt counts as none (`echoed`). `timeout_s` and
        `temperature` override the route's for this call (the provider's timeout still caps).
        """
        with contextlib.suppress(OSError):  # a full disk must not stop planning
            if not is_read_only():
                save_prompt(
                    self.layout,
                    role=self.route.role,
                    planner=self.route.planner_name,
                    messages=messages,
                    attempt=attempt,
                    dropped=dropped,
                )
        call = ModelCall(
            messages=tuple(messages),
            model=self.route.model,
            temperature=self.route.temperature if temperature is None else temperature,
            max_tokens=self.route.max_tokens,
            format=self.route.format,
            timeout_s=self.route.provider.timeout_s
            if timeout_s is None
            else min(timeout_s, self.route.provider.timeout_s),
            schema=spec,
        )
        started = time.monotonic()
        out = call_reliably(
            self.provider,
            call,
            policy=self.policy,
            breaker=self.breaker,
            deadline=self.deadline,
            sleep=self.sleep,
        )
        done = out.completion
        # A failed call may still have cost tokens (a time box that ran out mid-generation).
        spent = done or out.error
        tokens_in = (spent.tokens_in or 0) if spent is not None else 0
        tokens_out = (spent.tokens_out or 0) if spent is not None else 0
        u = self.usage
        self.usage = Usage(
            provider=u.provider,
            model=(done.model if done else None) or u.model,
            tokens_in=u.tokens_in + tokens_in,
            tokens_out=u.tokens_out + tokens_out,
            retries=u.retries + out.retries,
            calls=u.calls + out.attempts,
            duration_ms=u.duration_ms + (time.monotonic() - started) * 1000.0,
        )
        self.last_error = out.error
        self.echoed = False
        if done is None:
            return None, out.error.message if out.error else "no answer"
        if echoes_prompt(done.text, messages):
            self.echoed, self.echo_text = True, done.text
            self.last_error = ProviderError(
                "the model repeated the prompt instead of answering", retryable=True
            )
            return None, self.last_error.message
        return done.text, ""

    @property
    def slow(self) -> bool:
        """True when the last call failed for want of time (slow), not because it is down."""
        return isinstance(self.last_error, ProviderTimeout)


def merge_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Two roles' usage added up (provider and model of the first)."""
    if first is None or second is None:
        return first or second
    return Usage(
        provider=first.provider,
        model=first.model,
        tokens_in=first.tokens_in + second.tokens_in,
        tokens_out=first.tokens_out + second.tokens_out,
        retries=first.retries + second.retries,
        calls=first.calls + second.calls,
        duration_ms=first.duration_ms + second.duration_ms,
    )
