"""A GGUF model in-process through llama-cpp-python (optional extra `nexusd[llamacpp]`).

The model is loaded once per (path, n_ctx, n_threads) and kept; calls on it are
serialised. A call's `timeout_s` is wall-clock from the call: waiting for the model,
loading it, prompt processing and generation all count, and llama.cpp is told to
stop the moment it passes (see llama_runtime).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexusd.planner.providers.base import (
    Completion,
    ModelCall,
    ProviderError,
    ProviderSettings,
)
from nexusd.planner.providers.llama_runtime import ModelSlot, import_llama_cpp, model_slot


class LlamaCppProvider:
    """Chat completion on a local GGUF file (`model_path`)."""

    def __init__(self, settings: ProviderSettings) -> None:
        if not settings.model_path:
            raise ProviderError(
                f"provider `{settings.name}` (type llamacpp) has no model_path",
                hint=f"set providers.{settings.name}.model_path to a .gguf file",
            )
        self.settings = settings

    def slot(self) -> ModelSlot:
        """The process's slot for this provider's model (not loaded until a call needs it)."""
        s = self.settings
        assert s.model_path is not None
        return model_slot((s.model_path, s.n_ctx, s.n_threads), lambda: _load(s))

    def complete(self, call: ModelCall) -> Completion:
        """Generate on the local model; ProviderTimeout once `call.timeout_s` has passed."""
        return self.slot().run(self.settings.name, call.timeout_s, lambda llm: self._run(llm, call))

    def _run(self, llm: Any, call: ModelCall) -> Completion:
        kwargs: dict[str, Any] = {
            "messages": call.chat_messages(),
            "temperature": call.temperature,
            "max_tokens": call.max_tokens,
        }
        if call.format == "json":
            kwargs["response_format"] = {"type": "json_object"}
        try:
            out = llm.create_chat_completion(**kwargs)
        except (ValueError, RuntimeError) as exc:
            raise ProviderError(
                f"provider `{self.settings.name}`: llama.cpp failed: {exc}",
                hint="a prompt longer than n_ctx fails: raise n_ctx or lower "
                "planner.max_context_tokens",
            ) from exc
        text = str(out["choices"][0]["message"].get("content") or "")
        usage = out.get("usage") or {}
        return Completion(
            text=text,
            model=self.settings.model or Path(self.settings.model_path or "model.gguf").name,
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
        )


def _load(settings: ProviderSettings) -> Any:
    llama_cpp = import_llama_cpp()
    try:
        return llama_cpp.Llama(
            model_path=settings.model_path,
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            verbose=False,
        )
    except (ValueError, OSError, RuntimeError) as exc:
        raise ProviderError(
            f"provider `{settings.name}`: cannot load {settings.model_path}: {exc}",
            hint="check that model_path is a readable .gguf file",
        ) from exc
