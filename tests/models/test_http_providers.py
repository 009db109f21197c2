"""openai and ollama providers against our own loopback server (recorded real payloads)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderError,
    ProviderSettings,
    ProviderTimeout,
    create_provider,
)

from .loopback import Loopback, Reply, chat_payload

DATA = Path(__file__).parent / "data"
CALL = ModelCall(
    messages=(Message("system", "You plan."), Message("user", "Fix the login test.")),
    temperature=0.3,
    max_tokens=321,
    format="json",
    timeout_s=5.0,
    schema={"type": "object"},
)


def recorded(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def openai(url: str, **extra: object):
    return create_provider(
        ProviderSettings(name="api", type="openai", base_url=f"{url}/v1", model="m1", **extra)
    )


def test_openai_request_and_recorded_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEXUS_TEST_KEY", "sk-test-123")
    with Loopback([Reply(body=recorded("openai_chat.json"))]) as server:
        done = openai(server.url, api_key_env="NEXUS_TEST_KEY").complete(CALL)
    assert done.text == '{"analysis": "ok"}'
    assert (done.tokens_in, done.tokens_out) == (1117, 46)
    assert done.model == "gpt-4o-mini-2024-07-18"
    path, body, headers = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "m1"
    assert body["messages"] == [
        {"role": "system", "content": "You plan."},
        {"role": "user", "content": "Fix the login test."},
    ]
    assert (body["temperature"], body["max_tokens"]) == (0.3, 321)
    assert body["response_format"] == {"type": "json_object"}
    assert headers["Authorization"] == "Bearer sk-test-123"


def test_openai_missing_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEXUS_TEST_KEY", raising=False)
    with pytest.raises(ProviderError, match="NEXUS_TEST_KEY is not set"):
        openai("http://127.0.0.1:9", api_key_env="NEXUS_TEST_KEY").complete(CALL)


@pytest.mark.parametrize(
    ("reply", "retryable", "status"),
    [
        (Reply(500, {"error": "boom"}), True, 500),
        (Reply(503, "upstream unavailable"), True, 503),
        (Reply(429, {"error": {"message": "rate limited"}}), True, 429),
        (Reply(400, {"error": {"message": "bad model"}}), False, 400),
        (Reply(200, "<html>not json</html>"), False, 200),
        (Reply(200, {"choices": []}), False, None),
    ],
)
def test_openai_failures_are_classified(reply: Reply, retryable: bool, status: int | None) -> None:
    with Loopback([reply]) as server, pytest.raises(ProviderError) as info:
        openai(server.url).complete(CALL)
    assert info.value.retryable is retryable
    assert info.value.status == status


def test_openai_hang_hits_the_hard_timeout() -> None:
    with (
        Loopback([Reply(hang_s=30, body=chat_payload("late"))]) as server,
        pytest.raises(ProviderTimeout),
    ):
        openai(server.url).complete(ModelCall(messages=CALL.messages, timeout_s=0.5))


def test_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError) as info:
        openai(f"http://127.0.0.1:{port}").complete(CALL)
    assert info.value.retryable


def test_openai_needs_a_model() -> None:
    provider = create_provider(
        ProviderSettings(name="api", type="openai", base_url="http://127.0.0.1:9")
    )
    with pytest.raises(ProviderError, match="has no model"):
        provider.complete(CALL)


def ollama(url: str):
    return create_provider(
        ProviderSettings(name="laptop", type="ollama", base_url=url, model="llama3.2:3b")
    )


def test_ollama_recorded_chat_payload() -> None:
    with Loopback([Reply(body=recorded("ollama_chat.json"))]) as server:
        done = ollama(server.url).complete(CALL)
    assert json.loads(done.text)["actions"][0]["target_files"] == ["tests/conftest.py"]
    assert (done.tokens_in, done.tokens_out) == (412, 158)
    assert done.model == "llama3.2:3b"
    path, body, _ = server.requests[0]
    assert path == "/api/chat"
    assert body["stream"] is False
    assert body["format"] == {"type": "object"}
    assert body["options"] == {"temperature": 0.3, "num_predict": 321}


def test_ollama_plain_json_format_without_schema() -> None:
    with Loopback([Reply(body=recorded("ollama_chat.json"))]) as server:
        ollama(server.url).complete(ModelCall(messages=CALL.messages, format="json"))
        ollama(server.url).complete(ModelCall(messages=CALL.messages, format="text"))
    assert server.requests[0][1]["format"] == "json"
    assert "format" not in server.requests[1][1]


def test_ollama_model_not_found() -> None:
    with (
        Loopback([Reply(404, recorded("ollama_not_found.json"))]) as server,
        pytest.raises(ProviderError) as info,
    ):
        ollama(server.url).complete(CALL)
    assert info.value.status == 404
    assert "not found" in info.value.message
    assert not info.value.retryable
