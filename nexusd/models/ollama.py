"""Ollama's native chat API (`POST {base_url}/api/chat`, non-streaming)."""

from __future__ import annotations

from typing import Any

from nexusd.models.base import Completion, ModelCall, ProviderError, ProviderSettings

DEFAULT_BASE_URL = "http://127.0.0.1:11434"


class OllamaProvider:
    """Ollama: structured output through `format` (a JSON schema, or `json`)."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    def complete(self, call: ModelCall) -> Completion:
        """Send the call; return the message content and the eval counts as usage."""
        from nexusd.models.transport import post_json

        model = call.model_for(self.settings, "llama3.2:3b")
        body: dict[str, Any] = {
            "model": model,
            "messages": call.chat_messages(),
            "stream": False,
            "options": {"temperature": call.temperature, "num_predict": call.max_tokens},
        }
        if call.format == "json":
            body["format"] = dict(call.schema) if call.schema is not None else "json"
        base = (self.settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        data = post_json(f"{base}/api/chat", body, timeout_s=call.timeout_s)
        return parse_chat_response(data, model)


def parse_chat_response(data: dict[str, Any], model: str) -> Completion:
    """The text and usage of an Ollama `/api/chat` response."""
    if isinstance(data.get("error"), str):
        raise ProviderError(f"ollama: {data['error']}", hint="is the model pulled? `ollama pull`")
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ProviderError(f"ollama answer without message content: {str(data)[:200]}")
    prompt_eval = data.get("prompt_eval_count")
    eval_count = data.get("eval_count")
    return Completion(
        text=content,
        model=str(data.get("model") or model),
        tokens_in=prompt_eval if isinstance(prompt_eval, int) else None,
        tokens_out=eval_count if isinstance(eval_count, int) else None,
    )
