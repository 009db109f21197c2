"""The one interface every planner provider implements, and the values it exchanges.

A provider turns a `ModelCall` (chat messages, sampling settings, a hard timeout)
into a `Completion` (the text plus token usage) or raises `ProviderError`, whose
`retryable` flag tells the reliability layer whether another try can help.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from nexusd.errors import NexusError

Role = Literal["system", "user", "assistant"]
OutputFormat = Literal["json", "text"]


class ProviderError(NexusError):
    """A provider call that failed; `retryable` for timeouts, 429, 5xx and refused connections."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.retryable = retryable
        self.status = status
        # Tokens the model processed and generated before the call failed (a time box that
        # ran out mid-generation still cost them); None when the back end cannot say.
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None


class ProviderTimeout(ProviderError):
    """The provider did not answer within the call's hard timeout."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True, hint="raise timeout_ms, or use a faster model")


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclass(frozen=True)
class ModelCall:
    """What to ask a model: messages, sampling settings and the hard timeout in seconds."""

    messages: tuple[Message, ...]
    model: str | None = None
    temperature: float = 0.2
    max_tokens: int = 1024
    format: OutputFormat = "text"
    timeout_s: float = 60.0
    # A JSON schema for the answer, for back ends that can constrain decoding with it.
    schema: Mapping[str, Any] | None = None

    def chat_messages(self) -> list[dict[str, str]]:
        """The messages as chat APIs take them: `[{"role": …, "content": …}]`."""
        return [{"role": m.role, "content": m.content} for m in self.messages]

    def model_for(self, settings: ProviderSettings, example: str) -> str:
        """The model to ask: the call's, else the provider's (ProviderError when neither)."""
        model = self.model or settings.model
        if not model:
            raise ProviderError(
                f"provider `{settings.name}` has no model",
                hint=f"set providers.{settings.name}.model (e.g. `{example}`) "
                "or routing.<role>.model",
            )
        return model

    def as_text(self) -> str:
        """The messages flattened into one prompt, for back ends without chat roles."""
        parts = []
        for msg in self.messages:
            parts.append(f"### {msg.role}\n{msg.content.strip()}\n")
        return "\n".join(parts)


@dataclass(frozen=True)
class Completion:
    """A model's answer and its usage; tokens are None when the back end does not say."""

    text: str
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None


@dataclass(frozen=True)
class ProviderSettings:
    """One entry of `providers:` in the configuration, normalised."""

    name: str
    type: str
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    model_path: str | None = None
    timeout_ms: int = 60_000
    n_ctx: int = 4096
    n_threads: int | None = None
    # llamacpp: a llama-cpp-python chat format name, or `completion` for a plain prompt;
    # or a Jinja chat template. Neither: the GGUF's template, else a plain prompt.
    chat_format: str | None = None
    chat_template: str | None = None
    circuit_failures: int = 3
    circuit_reset_ms: int = 30_000
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def timeout_s(self) -> float:
        """The per-call hard timeout in seconds."""
        return self.timeout_ms / 1000.0


@runtime_checkable
class Provider(Protocol):
    """A chat model back end: `complete` answers one call or raises ProviderError."""

    settings: ProviderSettings

    def complete(self, call: ModelCall) -> Completion:
        """Answer `call` within `call.timeout_s` seconds or raise ProviderError."""
        ...


def label(settings: ProviderSettings, model: str | None = None) -> str:
    """The planner name shown in responses, e.g. `openai:gpt-4o-mini` or `offline`."""
    chosen = model or settings.model
    if settings.type == "offline" or not chosen:
        return settings.type if settings.name == settings.type else settings.name
    return f"{settings.name}:{chosen}"
