"""Time boxes are wall-clock from the call: a provider that stalls, trickles, lies or is
down costs at most its time box, and the response says why it fell back (slow or down).

Elapsed times are only checked against the time box plus a generous slack (machines are
noisy); the measured figures are in benchmarks/model_time_boxes.py.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
import yaml

from nexusd.config import config_from_mapping
from nexusd.models.budget import AnswerStart
from nexusd.models.llama_runtime import ModelSlot
from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderSettings,
    ProviderTimeout,
    create_provider,
)
from nexusd.paths import find_repo
from nexusd.planner.pipeline import answer_request
from tests.models.loopback import Loopback, Reply, chat_payload

SLACK_S = 15.0  # far above any honest overrun, far below the 60 s the server would stall
REQUEST = "---\ncycle: 1\ngoal: Make test_login pass in src/app/login.py\n---\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    "reply",
    [Reply(hang_s=60, body=chat_payload("late")), Reply(trickle_s=0.2, body=chat_payload("x"))],
    ids=["stalls-before-first-byte", "trickles"],
)
@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_provider_call_ends_within_its_time_box(reply: Reply, kind: str) -> None:
    with Loopback([reply]) as server:
        base = f"{server.url}/v1" if kind == "openai" else server.url
        provider = create_provider(
            ProviderSettings(name="p", type=kind, base_url=base, model="m", timeout_ms=600_000)
        )
        started = time.monotonic()
        with pytest.raises(ProviderTimeout):
            provider.complete(ModelCall(messages=(Message("user", "hi"),), timeout_s=1.0))
        assert time.monotonic() - started < 1.0 + SLACK_S


def test_a_model_slot_gives_up_at_the_deadline_and_is_not_used_twice_at_once() -> None:
    # The slot is generic: here the "model" is a real object whose work takes a while.
    class Model:
        def __init__(self) -> None:
            self.users = 0
            self.most = 0
            self.resets = 0

        def reset(self) -> None:
            self.resets += 1

    model = Model()
    slot = ModelSlot(("m", 1, None), lambda: model)

    def work(m: Model, seconds: float) -> str:
        m.users += 1
        m.most = max(m.most, m.users)
        try:
            time.sleep(seconds)
        finally:
            m.users -= 1
        return "done"

    started = time.monotonic()
    with pytest.raises(ProviderTimeout, match=r"within 0\.2s \(stopped while"):
        slot.run("slow", 0.2, lambda m, _: work(m, 1.0))
    assert time.monotonic() - started < 0.2 + SLACK_S
    # The abandoned work still holds the model: the next call waits, then gets it alone.
    assert slot.run("next", 30, lambda m, _: work(m, 0.01)) == "done"
    assert model.most == 1
    # Waiting for a busy model counts against the time box too, and says so.
    hold = threading.Thread(target=lambda: slot.run("hold", 30, lambda m, _: work(m, 0.6)))
    hold.start()
    time.sleep(0.1)
    with pytest.raises(ProviderTimeout, match="waiting for the model"):
        slot.run("late", 0.1, lambda m, _: work(m, 0.01))
    hold.join()


def _config(name: str, url: str, timeout_ms: int = 3000) -> dict[str, object]:
    # One provider name per test: the process's circuit breakers are kept by name.
    return {
        "planner": {"provider": name, "timeout_ms": timeout_ms, "max_retries": 5},
        # A provider's own timeout far above the plan's: the plan's time box must win.
        "providers": {
            name: {"type": "openai", "base_url": url, "model": "m", "timeout_ms": 600_000}
        },
        "checkpoint": {"on_request": False},
        "memory": {"enabled": False},
    }


def _request_beside_code(repo: Path) -> Path:
    """A request in a repository with code: the librarian's rerank (routed to the same
    provider) runs too, and shares the plan's time box with the architect."""
    (repo / "src" / "app").mkdir(parents=True)
    (repo / "src" / "app" / "login.py").write_text("def login(user):\n    return user\n")
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    request = folder / "2026-01-02T03_04_05_plan_request.md"
    request.write_text(REQUEST, encoding="utf-8")
    return request


@pytest.mark.parametrize(
    ("behaviour", "why"),
    [
        ("down", "provider down"),
        ("stalled", "provider slow"),
        ("trickling", "provider slow"),
        ("garbage", "unusable"),
    ],
)
def test_a_plan_with_a_misbehaving_provider_answers_within_the_time_box(
    repo: Path, behaviour: str, why: str
) -> None:
    request = _request_beside_code(repo)
    replies = {
        "down": [],
        "stalled": [Reply(hang_s=60, body=chat_payload("late"))],
        "trickling": [Reply(trickle_s=0.3, body=chat_payload("x" * 200))],
        "garbage": [Reply(body=chat_payload("lorem ipsum, not a plan"))],
    }[behaviour]
    with Loopback(replies or [Reply()]) as server:
        url = f"{server.url}/v1" if replies else f"http://127.0.0.1:{_free_port()}/v1"
        config = config_from_mapping(_config(f"api-{behaviour}", url))
        started = time.monotonic()
        outcome = answer_request(request, find_repo(repo), config)
        elapsed = time.monotonic() - started
    assert outcome.status == "ok", outcome.message
    assert elapsed < 3.0 + SLACK_S
    meta = yaml.safe_load(outcome.response_path.read_text().split("---\n")[1])
    assert meta["planner"] == "offline"
    assert any(why in w for w in meta["warnings"]), meta["warnings"]
    if behaviour in ("stalled", "trickling"):
        assert not any("provider down" in w for w in meta["warnings"])


def test_a_plan_whose_budget_was_spent_before_the_model_does_not_ask_it(repo: Path) -> None:
    # planner.timeout_ms counts from the answer's start: an answer that started long ago
    # (a slow start-up, slow checks) has nothing left for the model, so it is not asked.
    request = _request_beside_code(repo)
    with Loopback([Reply(body=chat_payload("lorem ipsum"))]) as server:
        config = config_from_mapping(_config("api-spent", f"{server.url}/v1", timeout_ms=5000))
        start = AnswerStart(time.monotonic() - 30.0, "the command started")
        outcome = answer_request(request, find_repo(repo), config, start=start)
        asked = list(server.requests)
    assert outcome.status == "ok", outcome.message
    assert asked == []  # neither the librarian's rerank nor the architect
    meta = yaml.safe_load(outcome.response_path.read_text().split("---\n")[1])
    assert meta["planner"] == "offline"
    (note,) = [w for w in meta["warnings"] if "planner.timeout_ms" in w]
    assert "(5 s) was spent before the model could be asked" in note
    assert "since the command started" in note
    assert "raise planner.timeout_ms" in note
    assert not any("provider down" in w or "provider slow" in w for w in meta["warnings"])
