"""Overhead of each sandbox backend on a trivial check, against baselines in the same run.

Baselines: a bare subprocess (`sh -c true`) and `docker run --rm` of the same image.
Variants: the subprocess backend, bwrap, docker (cold: one container per check) and
docker with a warm pool. Runs are interleaved (A B C … A B C …) after a warm-up;
the warm pool is refilled (untimed) between rounds so its background work does
not land inside other variants' timings.

Goals: bwrap at most +20 ms over a bare subprocess; docker at most 1.1x
`docker run --rm`; the warm pool at most 0.3x `docker run --rm`.

Usage: python benchmarks/sandbox.py [--quick] [--samples N]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

# Runnable from a fresh clone without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nexusd.sandbox import bwrap_backend, docker_backend, subprocess_backend
from nexusd.sandbox.pool import WarmPool
from nexusd.sandbox.spec import CheckSpec

IMAGE = "nexusd-python:bookworm"


def tree_tar() -> bytes:
    """A one-file tree, what `git archive` of a tiny repository yields."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        data = b"print('hello')\n"
        info = tarfile.TarInfo("main.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def spec() -> CheckSpec:
    """The trivial check, with the default sandbox limits."""
    return CheckSpec(
        name="trivial",
        run="true",
        image=IMAGE,
        timeout=60,
        memory_bytes=256 * 1024**2,
        cpus=1.0,
        pids=128,
    )


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def summary(values: list[float]) -> dict[str, float]:
    """Median, p99 and max of a sample."""
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p99": p99, "max": ordered[-1]}


def main() -> None:
    """Run the benchmark, print a table, then one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few samples (< 1 minute)")
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    samples = args.samples or (8 if args.quick else 30)
    tar, check = tree_tar(), spec()
    client = docker_backend.connect()
    docker_backend.require_image(client, IMAGE)
    pool = WarmPool(check, size=1, client=client)
    pool.start()

    def warm() -> None:
        result = pool.run(check, tar)
        assert result is not None and result.status == "passed", result

    def ok(result: object) -> None:
        assert getattr(result, "status", None) == "passed", result

    variants: dict[str, Callable[[], object]] = {
        "bare_subprocess": lambda: subprocess.run(["/bin/sh", "-c", "true"], check=True),
        "subprocess_backend": lambda: ok(subprocess_backend.run(check, tar)),
        "bwrap": lambda: ok(bwrap_backend.run(check, tar)),
        "docker_run_rm": lambda: subprocess.run(
            ["docker", "run", "--rm", "--network", "none", IMAGE, "true"],
            check=True,
            stdout=subprocess.DEVNULL,
        ),
        "docker": lambda: ok(docker_backend.run(check, tar, client=client)),
        "docker_warm_pool": warm,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for round_no in range(samples + 2):
            for name, fn in variants.items():
                pool.wait_idle()
                elapsed = timed(fn)
                if round_no >= 2:  # the first two rounds warm caches up
                    times[name].append(elapsed)
    finally:
        pool.stop()

    stats = {name: summary(values) for name, values in times.items()}
    print(f"{'variant':<20} {'median ms':>10} {'p99 ms':>10} {'max ms':>10}   (n={samples})")
    for name, s in stats.items():
        print(f"{name:<20} {s['median']:>10.1f} {s['p99']:>10.1f} {s['max']:>10.1f}")
    med = {name: s["median"] for name, s in stats.items()}
    metrics = {
        "bwrap_overhead_ms_vs_bare": round(med["bwrap"] - med["bare_subprocess"], 2),
        "subprocess_backend_overhead_ms_vs_bare": round(
            med["subprocess_backend"] - med["bare_subprocess"], 2
        ),
        "ratio_docker_vs_docker_run_rm": round(med["docker"] / med["docker_run_rm"], 3),
        "ratio_warm_pool_vs_docker_run_rm": round(
            med["docker_warm_pool"] / med["docker_run_rm"], 3
        ),
        **{f"{name}_median_ms": round(value, 2) for name, value in med.items()},
    }
    goals = {
        "bwrap_overhead_ms_vs_bare": ("<=", 20),
        "ratio_docker_vs_docker_run_rm": ("<=", 1.1),
        "ratio_warm_pool_vs_docker_run_rm": ("<=", 0.3),
    }
    for key, (_, goal) in goals.items():
        verdict = "meets" if metrics[key] <= goal else "MISSES"
        print(f"{key} = {metrics[key]} (goal <= {goal}: {verdict})")
    machine = {"cpus": os.cpu_count(), "python": platform.python_version()}
    print(
        json.dumps(
            {"benchmark": "sandbox", "metrics": metrics, "samples": samples, "machine": machine}
        )
    )


if __name__ == "__main__":
    main()
