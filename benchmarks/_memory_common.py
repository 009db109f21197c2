"""Helpers shared by the memory benchmarks: model loading, timing stats, machine info."""

from __future__ import annotations

import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_1m": None if load is None else round(load, 2),
    }


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0–100), nearest-rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def summary(values: list[float]) -> dict[str, float]:
    """Median, p99 and max of a sample (same unit as the input)."""
    return {
        "median": statistics.median(values) if values else float("nan"),
        "p99": pct(values, 99),
        "max": max(values) if values else float("nan"),
        "n": len(values),
    }


def shared_dir() -> Path:
    """`../shared` beside the checkout."""
    here = Path(__file__).resolve().parents[1]
    for candidate in (here.parent / "shared", here.parent.parent / "shared"):
        if candidate.is_dir():
            return candidate
    raise SystemExit("../shared/ is not beside this checkout")


def torch_embedder(spec: str = "all-MiniLM-L6-v2") -> Any:
    """The same model forced onto sentence-transformers (the runtime before ONNX): the
    baseline the ONNX runtime is compared with in the same process."""
    from nexusd.memory.embedder import RUNTIME_ENV, Embedder

    before = os.environ.get(RUNTIME_ENV)
    os.environ[RUNTIME_ENV] = "torch"
    try:
        emb = Embedder(spec)
        assert emb.load(), emb.error
    finally:
        if before is None:
            del os.environ[RUNTIME_ENV]
        else:
            os.environ[RUNTIME_ENV] = before
    return emb


def set_threads(n: int) -> None:
    """`n` threads for either runtime: torch's now, ONNX Runtime's at its (later) load."""
    os.environ["OMP_NUM_THREADS"] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
