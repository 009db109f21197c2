"""Query expansion by the librarian's model, and its silence when offline or failing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexusd.config import config_from_mapping
from nexusd.context.llm_librarian import expand_queries
from nexusd.models.reliability import BreakerBoard
from nexusd.paths import find_repo
from tests.models.loopback import Loopback, Reply, chat_payload


def expand(repo: Path, url: str | None) -> tuple[str, ...]:
    layer = (
        {}
        if url is None
        else {
            "routing": {"librarian": {"provider": "small"}},
            "providers": {
                "small": {
                    "type": "openai",
                    "base_url": f"{url}/v1",
                    "model": "tiny",
                    "timeout_ms": 3000,
                }
            },
        }
    )
    return expand_queries(
        layout=find_repo(repo),
        config=config_from_mapping(layer),
        goal="Fix the flaky login test",
        breakers=BreakerBoard(),
        sleep=lambda s: None,
    )


def test_offline_asks_nobody(repo: Path) -> None:
    assert expand(repo, None) == ()


def test_queries_are_cleaned_deduplicated_and_capped(repo: Path) -> None:
    answer = {
        "queries": ["login  test", "login test", "session fixture", 7, "", "auth flow", "extra"]
    }
    with Loopback([Reply(body=chat_payload(json.dumps(answer)))]) as server:
        assert expand(repo, server.url) == ("login test", "session fixture", "auth flow")
    assert server.requests[0][1]["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, "down"),
        Reply(body=chat_payload("no json")),
        Reply(body=chat_payload('{"queries": "one"}')),
    ],
)
def test_failures_add_no_queries(repo: Path, reply: Reply) -> None:
    with Loopback([reply]) as server:
        assert expand(repo, server.url) == ()
