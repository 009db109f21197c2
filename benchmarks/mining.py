"""How long mining a request for code takes, on real reports and on hostile pastes.

`nexusd.code.query.mine` runs on every plan request and every `code search`. Real reports
come from `../shared/eval-data/swe-lite-loc/instances.jsonl` (110 SWE-bench Lite problem
statements); hostile ones are what users paste by accident: 20 KB runs of dashes, slashes
and backticks (which once took 0.3–2.4 s each), a 1 MB log, a traceback quoted with `> `.
Baseline in the same run, interleaved: one pass of the tokenizer over the same text
(`tokens`), the least any miner must do. Goal: no 20 KB input over 100 ms (p99 of real
reports ≤ 20 ms).

    python benchmarks/mining.py [--quick]     # --quick: 3 samples instead of 9
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from nexusd.code.query import mine
from nexusd.code.tokens import tokens

DATA = Path(__file__).resolve().parents[2] / "shared/eval-data/swe-lite-loc/instances.jsonl"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/venv/lib/python3.11/site-packages/pkg/mod.py", line 12, in run\n'
    "    helper(x)\nValueError: bad value for the thing\n"
)
HOSTILE = {
    "dashes 20 KB": "-" * 20_000,
    "slashes 20 KB": "a/" * 10_000,
    "dash-slash lines 20 KB": ("-/" * 1_000 + "\n") * 10,
    "backticks 20 KB": "`" * 20_000,
    "parentheses 20 KB": "()" * 10_000,
    "quoted traceback 20 KB": "".join(f"> {line}\n" for line in (TRACE * 160).splitlines()),
    "log 1 MB": "".join(
        f"2024-01-01T00:00:{i % 60:02d}.1234567Z INFO step {i}\n" for i in range(22_000)
    ),
}


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _row(name: str, text: str, samples: int) -> tuple[float, float]:
    mined, base = [], []
    for _ in range(samples):  # interleaved: mine, then the tokenizer, on the same text
        mined.append(_ms(lambda: mine(text)))
        base.append(_ms(lambda: list(tokens(text))))
    m, b = statistics.median(mined), statistics.median(base)
    print(f"{name:<26} {len(text):>9} {m:>9.1f} {max(mined):>9.1f} {b:>9.1f} {m / b:>7.1f}×")
    return m, max(mined)


def main() -> None:
    """Print the table, then the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 samples instead of 9")
    args = parser.parse_args()
    samples = 3 if args.quick else 9
    mine("warm up ValueError in f()")
    print(f"{'input':<26} {'chars':>9} {'p50 ms':>9} {'max ms':>9} {'tokens ms':>9} {'ratio':>8}")
    metrics: dict[str, float] = {}
    for name, text in HOSTILE.items():
        p50, worst = _row(name, text, samples)
        key = name.replace(" ", "_").replace("-", "_").lower()
        metrics[f"{key}_p50_ms"], metrics[f"{key}_max_ms"] = round(p50, 2), round(worst, 2)
    if DATA.exists():
        reports = [json.loads(line)["problem_statement"] for line in DATA.open(encoding="utf-8")]
        times = sorted(_ms(lambda r=r: mine(r)) for r in reports for _ in range(samples // 3))
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        p50 = statistics.median(times)
        print(
            f"{len(reports)} real reports: p50 {p50:.2f} ms, p99 {p99:.2f} ms,"
            f" max {times[-1]:.2f} ms"
        )
        metrics.update(real_p50_ms=round(p50, 2), real_p99_ms=round(p99, 2))
    print(
        json.dumps(
            {
                "benchmark": "mining",
                "metrics": metrics,
                "samples": samples,
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            }
        )
    )


if __name__ == "__main__":
    main()
