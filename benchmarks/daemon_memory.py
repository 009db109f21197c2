"""Resident memory of a started daemon, its embedding model on torch vs ONNX Runtime.

    python benchmarks/daemon_memory.py [--quick] [--repo PATH] [--rounds N]

Starts the daemon through the CLI (`nexusd start`, default configuration: memory and
code index on) on (a) a small generated repository and (b), with `--repo`, a copy of a
local clone (e.g. sympy: `git clone /work/.mirror/sympy+sympy/repo /tmp/sympy-rss`; the
clone is copied with `git clone --local`, never modified). Each run starts on a fresh
index, waits until the model is loaded and the code index is complete (`nexusd status
--json`, the socket's `ping`), lets the daemon settle, then reads VmRSS (idle; median of
5 samples 1 s apart) and VmHWM (peak) from /proc/<pid>/status. The baseline is the same
daemon with `NEXUSD_EMBEDDING_RUNTIME=torch` (sentence-transformers, as before), run
interleaved with `onnx` (torch B A A B …). The ONNX graph is exported into the user's
cache before the first run, so no run pays the one-time export. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _daemon_common import make_memory_repo, nexusd, own_git_config, run, wait_ready

from nexusd.memory.embedder import RUNTIME_ENV, resolve_model
from nexusd.memory.onnx_encoder import ensure_graph
from nexusd.paths import find_repo

GOALS_MB = {"demo": 400, "repo": 600}


def copy_repo(source: Path, base: Path) -> Path:
    """A local clone of `source` (hard links, seconds), initialised for nexusd."""
    root = base / source.name
    run(base, "git", "clone", "-q", "--local", str(source), str(root))
    nexusd(root, "init")
    return root


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of `pid`, in kB."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def measure(root: Path, runtime: str, settle: float, timeout: float) -> dict[str, float | str]:
    """One daemon on a fresh index: idle RSS and peak, in MB."""
    layout = find_repo(root)
    shutil.rmtree(layout.index_dir, ignore_errors=True)
    env = {**os.environ, RUNTIME_ENV: runtime}
    started = time.monotonic()
    nexusd(root, "start", env=env)
    try:
        pid = int(layout.pidfile.read_text().strip())
        ping = wait_ready(root, timeout)
        ready_s = time.monotonic() - started
        if ping.get("runtime") != runtime:
            raise SystemExit(f"asked for {runtime}, the daemon runs {ping.get('runtime')}: {ping}")
        time.sleep(settle)
        samples = []
        for _ in range(5):
            samples.append(proc_status(pid)["VmRSS"])
            time.sleep(1.0)
        peak = proc_status(pid)["VmHWM"]
    finally:
        nexusd(root, "stop")
    return {
        "runtime": runtime,
        "rss_mb": statistics.median(samples) / 1024,
        "hwm_mb": peak / 1024,
        "ready_s": ready_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="demo only, one run each")
    parser.add_argument("--repo", type=Path, help="a local git clone to measure too (copied)")
    parser.add_argument("--rounds", type=int, default=None, help="runs per runtime (default 2)")
    parser.add_argument("--settle", type=float, default=None, help="idle seconds before reading")
    opts = parser.parse_args()
    rounds = opts.rounds or (1 if opts.quick else 2)
    settle = opts.settle if opts.settle is not None else (3.0 if opts.quick else 10.0)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        own_git_config(base)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        t0 = time.monotonic()
        ensure_graph(Path(resolve_model("all-MiniLM-L6-v2")))  # the one-time export, if due
        export_s = time.monotonic() - t0
        targets = [("demo", make_memory_repo(base, "demo"), 300.0)]
        if opts.repo is not None and not opts.quick:
            targets.append(("repo", copy_repo(opts.repo.resolve(), base), 900.0))
        results: dict[str, list[dict[str, float | str]]] = {}
        for name, root, timeout in targets:
            order = ["torch", "onnx", "onnx", "torch"] * rounds
            for runtime in order[: 2 * rounds]:
                row = measure(root, runtime, settle, timeout)
                results.setdefault(f"{name}/{runtime}", []).append(row)
                print(
                    f"  {name:<5} {runtime:<6} rss {row['rss_mb']:7.1f} MB  peak "
                    f"{row['hwm_mb']:7.1f} MB  ready in {row['ready_s']:5.1f} s",
                    flush=True,
                )
    print(f"\nONNX graph in the cache after {export_s:.1f} s (export only when it was missing)")
    print(f"{'repo':<6}{'runtime':<8}{'idle RSS MB':>13}{'peak MB':>10}{'ready s':>9}{'n':>3}")
    metrics: dict[str, float] = {"export_or_check_s": round(export_s, 2)}
    for key, rows in results.items():
        name, runtime = key.split("/")
        rss = statistics.median(float(r["rss_mb"]) for r in rows)
        hwm = statistics.median(float(r["hwm_mb"]) for r in rows)
        ready = statistics.median(float(r["ready_s"]) for r in rows)
        print(f"{name:<6}{runtime:<8}{rss:>13.1f}{hwm:>10.1f}{ready:>9.1f}{len(rows):>3}")
        metrics[f"{name}_{runtime}_idle_rss_mb"] = round(rss, 1)
        metrics[f"{name}_{runtime}_peak_mb"] = round(hwm, 1)
        metrics[f"{name}_{runtime}_ready_s"] = round(ready, 1)
    for name, goal in GOALS_MB.items():
        if f"{name}/onnx" in results:
            ratio = metrics[f"{name}_onnx_idle_rss_mb"] / metrics[f"{name}_torch_idle_rss_mb"]
            metrics[f"{name}_onnx_vs_torch"] = round(ratio, 3)
            met = "met" if metrics[f"{name}_onnx_idle_rss_mb"] <= goal else "NOT met"
            print(f"{name}: onnx / torch idle RSS {ratio:.2f}; goal ≤ {goal} MB {met}")
    result = {
        "benchmark": "daemon_memory",
        "metrics": metrics,
        "samples": rounds,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
