"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, llama.cpp's server, LM Studio, …

`base_url` is the API root (e.g. `http://127.0.0.1:8080/v1`); the key is read
from the environment variable named by `api_key_env`, never from the config file.
"""

from __future__ import annotations

import os
from typing import Any

from nexusd.models.base import Completion, ModelCall, ProviderError, ProviderSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider:
    """Chat completions over HTTP (`POST {base_url}/chat/completions`)."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    def complete(self, call: ModelCall) -> Completion:
        """Send the call; return the first choice's content and the reported usage."""
        from nexusd.models.transport import post_json

        model = call.model_for(self.settings, "gpt-4o-mini")
        body: dict[str, Any] = {
            "model": model,
            "messages": call.chat_messages(),
            "temperature": call.temperature,
            "max_tokens": call.max_tokens,
            "stream": False,
        }
        if call.format == "json":
            body["response_format"] = {"type": "json_object"}
        base = (self.settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        data = post_json(
            f"{base}/chat/completions", body, timeout_s=call.timeout_s, headers=self._headers()
        )
        return parse_chat_completion(data, model)

    def _headers(self) -> dict[str, str]:
        env = self.settings.api_key_env
        if not env:
            return {}
        key = os.environ.get(env)
        if not key:
            raise ProviderError(
                f"provider `{self.settings.name}`: environment variable {env} is not set",
                hint=f"export {env}=<your API key> before starting nexusd",
            )
        return {"Authorization": f"Bearer {key}"}


def parse_chat_completion(data: dict[str, Any], model: str) -> Completion:
    """The text and usage of an OpenAI-style chat completion payload."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError(f"chat completion without choices: {str(data)[:200]}")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ProviderError(f"chat completion without message content: {str(data)[:200]}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    return Completion(
        text=content,
        model=str(data.get("model") or model),
        tokens_in=_int_or_none(usage.get("prompt_tokens")),
        tokens_out=_int_or_none(usage.get("completion_tokens")),
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
