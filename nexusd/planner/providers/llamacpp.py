"""A GGUF model in-process through llama-cpp-python (optional extra `nexusd[llamacpp]`).

The model is loaded once per path and kept; calls on it are serialised. The
deadline is enforced between tokens: a logits processor aborts generation when
the call's time is up.
"""

from __future__ import annotations

import atexit
import importlib
import threading
import time
from pathlib import Path
from typing import Any

from nexusd.planner.providers.base import (
    Completion,
    ModelCall,
    ProviderError,
    ProviderSettings,
    ProviderTimeout,
)

_MODELS: dict[tuple[str, int, int | None], Any] = {}
_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    # Free the models while the interpreter can still run llama.cpp's destructors.
    with _LOCK:
        for llm in _MODELS.values():
            llm.close()
        _MODELS.clear()


class LlamaCppProvider:
    """Chat completion on a local GGUF file (`model_path`)."""

    def __init__(self, settings: ProviderSettings) -> None:
        if not settings.model_path:
            raise ProviderError(
                f"provider `{settings.name}` (type llamacpp) has no model_path",
                hint=f"set providers.{settings.name}.model_path to a .gguf file",
            )
        self.settings = settings

    def complete(self, call: ModelCall) -> Completion:
        """Generate on the local model, streaming; stop when `call.timeout_s` passes."""
        deadline = time.monotonic() + call.timeout_s
        kwargs: dict[str, Any] = {
            "messages": call.chat_messages(),
            "temperature": call.temperature,
            "max_tokens": call.max_tokens,
            "stream": True,
        }
        if call.format == "json":
            kwargs["response_format"] = {"type": "json_object"}
        pieces: list[str] = []
        with _LOCK:
            llm = _load(self.settings)
            stream = llm.create_chat_completion(**kwargs)
            try:
                for chunk in stream:
                    delta = chunk["choices"][0].get("delta") or {}
                    pieces.append(str(delta.get("content") or ""))
                    if time.monotonic() > deadline:
                        raise ProviderTimeout(
                            f"provider `{self.settings.name}`: generation passed "
                            f"{call.timeout_s:.1f}s (stopped)"
                        )
            finally:
                stream.close()
            tokens_in = len(llm.tokenize(call.as_text().encode("utf-8")))
        name = self.settings.model or Path(self.settings.model_path or "model.gguf").name
        return Completion(
            text="".join(pieces),
            model=name,
            tokens_in=tokens_in,
            tokens_out=sum(1 for piece in pieces if piece),
        )


def _load(settings: ProviderSettings) -> Any:
    assert settings.model_path is not None
    key = (settings.model_path, settings.n_ctx, settings.n_threads)
    if key not in _MODELS:
        try:
            llama_cpp = importlib.import_module("llama_cpp")
        except ImportError as exc:
            raise ProviderError(
                "llama-cpp-python is not installed",
                hint="pip install 'nexusd[llamacpp]' (compiles llama.cpp; takes minutes)",
            ) from exc
        try:
            _MODELS[key] = llama_cpp.Llama(
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
    return _MODELS[key]
