"""The default provider: no model, answers come from a callable the pipeline gives.

The architect never calls a model when routed to `offline`; the pipeline's
offline planner is the answer. A caller that needs text from this provider
(say, a test or a dry run) passes `answer`; without it the call fails with a hint
saying how to configure a real provider.
"""

from __future__ import annotations

from collections.abc import Callable

from nexusd.models.base import Completion, ModelCall, ProviderError, ProviderSettings

CONFIGURE_HINT = (
    "add a provider to .nexus/config.yaml, e.g.\n"
    "    providers:\n"
    "      local: {type: ollama, base_url: 'http://127.0.0.1:11434', model: 'qwen2.5-coder:7b'}\n"
    "    planner:\n"
    "      provider: local\n"
    "  (types: openai, ollama, command, llamacpp; see README `Planner providers`)"
)


class OfflineProvider:
    """Delegates to `answer(call)`; without one it explains how to configure a model."""

    def __init__(
        self, settings: ProviderSettings, answer: Callable[[ModelCall], str] | None = None
    ) -> None:
        self.settings = settings
        self.answer = answer

    def complete(self, call: ModelCall) -> Completion:
        """The delegate's text, or ProviderError when there is no model to ask."""
        if self.answer is None:
            raise ProviderError("the offline planner has no language model", hint=CONFIGURE_HINT)
        return Completion(text=self.answer(call), model="offline")
