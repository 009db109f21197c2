"""Retries, backoff with jitter, the circuit breaker and the deadline, against a real server."""

from __future__ import annotations

import random

import pytest

from nexusd.models.registry import Message, ModelCall, ProviderSettings, create_provider
from nexusd.models.reliability import (
    CircuitBreaker,
    Deadline,
    RetryPolicy,
    call_reliably,
)
from tests.models.loopback import Loopback, Reply, chat_payload


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


CALL = ModelCall(messages=(Message("user", "plan"),), timeout_s=5.0)


def provider(url: str, timeout_ms: int = 5000):
    return create_provider(
        ProviderSettings(
            name="api", type="openai", base_url=f"{url}/v1", model="m", timeout_ms=timeout_ms
        )
    )


@pytest.mark.parametrize("retry", range(6))
def test_backoff_grows_exponentially_with_bounded_jitter(retry: int) -> None:
    policy = RetryPolicy(max_retries=6, base_delay_s=0.5, max_delay_s=4.0)
    rng = random.Random(retry)
    ceiling = min(4.0, 0.5 * 2**retry)
    delays = [policy.delay(retry, rng) for _ in range(200)]
    assert all(ceiling / 2 <= d <= ceiling for d in delays)
    assert len({round(d, 6) for d in delays}) > 100


def test_breaker_opens_half_opens_and_closes() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=2, reset_s=30, clock=clock)
    assert breaker.allow() and breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "open" and not breaker.allow()
    assert breaker.retry_after() == 30
    clock.now += 30
    assert breaker.state == "half_open"
    assert breaker.allow()
    assert not breaker.allow(), "only one trial while half-open"
    breaker.record_failure()
    assert breaker.state == "open", "a failed trial opens it again"
    clock.now += 30
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed" and breaker.allow()


def test_transient_failures_are_retried_until_success() -> None:
    replies = [Reply(500, "oops"), Reply(429, "slow down"), Reply(body=chat_payload("fine"))]
    pauses: list[float] = []
    with Loopback(replies) as server:
        out = call_reliably(
            provider(server.url),
            CALL,
            policy=RetryPolicy(max_retries=3, base_delay_s=0.01),
            breaker=CircuitBreaker(5),
            deadline=Deadline(30),
            sleep=pauses.append,
        )
    assert out.completion is not None and out.completion.text == "fine"
    assert (out.retries, out.attempts, len(pauses)) == (2, 3, 2)
    assert len(server.requests) == 3


def test_retries_stop_at_the_limit_and_keep_the_last_error() -> None:
    with Loopback([Reply(503, "down")]) as server:
        out = call_reliably(
            provider(server.url),
            CALL,
            policy=RetryPolicy(max_retries=2, base_delay_s=0.01),
            breaker=CircuitBreaker(10),
            deadline=Deadline(30),
            sleep=lambda s: None,
        )
    assert out.completion is None and out.error is not None and out.error.status == 503
    assert (out.retries, out.attempts) == (2, 3)


def test_non_retryable_errors_are_not_retried() -> None:
    with Loopback([Reply(401, "bad key")]) as server:
        out = call_reliably(
            provider(server.url),
            CALL,
            policy=RetryPolicy(max_retries=5),
            breaker=CircuitBreaker(10),
            deadline=Deadline(30),
            sleep=lambda s: None,
        )
    assert out.error is not None and out.error.status == 401 and out.attempts == 1


def test_open_breaker_refuses_without_calling() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=2, reset_s=60, clock=clock)
    with Loopback([Reply(500, "x")]) as server:
        api = provider(server.url)
        for _ in range(2):
            call_reliably(
                api,
                CALL,
                policy=RetryPolicy(0),
                breaker=breaker,
                deadline=Deadline(30),
                sleep=lambda s: None,
            )
        assert breaker.state == "open"
        out = call_reliably(
            api,
            CALL,
            policy=RetryPolicy(3),
            breaker=breaker,
            deadline=Deadline(30),
            sleep=lambda s: None,
        )
    assert len(server.requests) == 2
    assert out.attempts == 0 and out.error is not None and "circuit open" in out.error.message


def test_a_hung_provider_is_cut_by_the_deadline() -> None:
    with Loopback([Reply(hang_s=60, body=chat_payload("late"))]) as server:
        out = call_reliably(
            provider(server.url, timeout_ms=60_000),
            ModelCall(messages=CALL.messages, timeout_s=60),
            policy=RetryPolicy(max_retries=5, base_delay_s=5.0),
            breaker=CircuitBreaker(10),
            deadline=Deadline(1.0),
        )
    assert out.completion is None and out.error is not None and out.error.retryable
    # The only call got the deadline's remaining time, and no retry fitted in what was left.
    assert out.attempts == 1


def test_a_crashing_third_party_provider_becomes_an_error() -> None:
    class Broken:
        settings = ProviderSettings(name="plugin", type="plugin")

        def complete(self, call: ModelCall) -> None:
            raise ValueError("bug in plugin")

    out = call_reliably(
        Broken(),
        CALL,
        policy=RetryPolicy(2),
        breaker=CircuitBreaker(),  # type: ignore[arg-type]
        deadline=Deadline(5),
        sleep=lambda s: None,
    )
    assert out.error is not None and "bug in plugin" in out.error.message and out.attempts == 1
