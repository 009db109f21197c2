"""The critic's model diagnosis, and the rule-based one when it is offline or down."""

from __future__ import annotations

from pathlib import Path

from nexusd.config import config_from_mapping
from nexusd.models.prompts import ContextItem
from nexusd.models.reliability import BreakerBoard
from nexusd.paths import find_repo
from nexusd.solve.review import review_with_llm
from tests.models.loopback import Loopback, Reply, chat_payload

FAILURES = [ContextItem("check", "pytest", "E   AssertionError: assert 3 == 4", 1.0)]


def review(repo: Path, url: str | None):
    layer = (
        {}
        if url is None
        else {
            "routing": {"critic": {"provider": "judge"}},
            "providers": {
                "judge": {
                    "type": "openai",
                    "base_url": f"{url}/v1",
                    "model": "j",
                    "timeout_ms": 3000,
                }
            },
            "planner": {"max_retries": 0},
        }
    )
    return review_with_llm(
        layout=find_repo(repo),
        config=config_from_mapping(layer),
        goal="make add() right",
        failures=FAILURES,
        fallback="rules say X",
        breakers=BreakerBoard(),
        sleep=lambda s: None,
    )


def test_offline_uses_the_rules(repo: Path) -> None:
    assert review(repo, None).text == "rules say X"


def test_model_diagnosis(repo: Path) -> None:
    with Loopback([Reply(body=chat_payload("add() returns a-b; use a+b.", tokens=(50, 9)))]) as s:
        result = review(repo, s.url)
    assert (result.text, result.planner) == ("add() returns a-b; use a+b.", "judge:j")
    assert result.usage is not None and result.usage.tokens_out == 9
    assert "AssertionError: assert 3 == 4" in s.requests[0][1]["messages"][1]["content"]


def test_critic_down_falls_back_with_a_note(repo: Path) -> None:
    with Loopback([Reply(502, "bad gateway")]) as server:
        result = review(repo, server.url)
    assert result.text == "rules say X" and result.planner == "offline"
    assert result.notes[0].startswith("critic down: used the rule-based diagnosis")
