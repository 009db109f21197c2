"""`git commit` time with nexusd's hooks installed vs without (goal: at most +20 ms).

    python benchmarks/hooks.py [--quick]

Two identical generated repositories, one with `nexusd hooks install`; commits
alternate between them (A B, B A, …). Reports median, p99 and max per side, the
difference of medians, and the time of the post-commit hook script alone. The
last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _daemon_common import own_git_config

from nexusd.hooks.installer import install
from nexusd.paths import find_repo


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_repo(base: Path, name: str, files: int) -> Path:
    root = base / name
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "gc.auto", "0")
    for i in range(files):
        (root / f"f{i:04d}.txt").write_text(f"{i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def timed_commit(root: Path, n: int) -> float:
    (root / "f0000.txt").write_text(f"change {n}\n")
    git(root, "add", "f0000.txt")
    start = time.perf_counter()
    git(root, "commit", "-qm", f"change {n}")
    return time.perf_counter() - start


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    opts = parser.parse_args()
    samples = 15 if opts.quick else 41
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        own_git_config(base)
        plain = make_repo(base, "plain", 200)
        hooked = make_repo(base, "hooked", 200)
        layout = find_repo(hooked)
        install(layout)
        without: list[float] = []
        with_hooks: list[float] = []
        for n in range(3):  # warm-up
            timed_commit(plain, n)
            timed_commit(hooked, n)
        for n in range(samples):
            if n % 2:
                without.append(timed_commit(plain, 100 + n))
                with_hooks.append(timed_commit(hooked, 100 + n))
            else:
                with_hooks.append(timed_commit(hooked, 100 + n))
                without.append(timed_commit(plain, 100 + n))
        hook = layout.git_common_dir / "hooks" / "post-commit"
        script: list[float] = []
        for _ in range(samples):
            start = time.perf_counter()
            subprocess.run([str(hook)], cwd=hooked, check=True)
            script.append(time.perf_counter() - start)
        queued = len(list(layout.inbox_dir.glob("post-commit.*.jsonl")))
    med_with = statistics.median(with_hooks) * 1000
    med_without = statistics.median(without) * 1000
    print(f"{'':>14} {'median':>8} {'p99':>8} {'max':>8}")
    for label, values in (
        ("without hooks", without),
        ("with hooks", with_hooks),
        ("hook alone", script),
    ):
        print(
            f"{label:>14} {statistics.median(values) * 1000:>6.1f}ms"
            f" {pct(values, 0.99) * 1000:>6.1f}ms {max(values) * 1000:>6.1f}ms"
        )
    print(
        f"added per commit: {med_with - med_without:+.1f} ms (goal ≤ +20 ms);"
        f" events queued: {queued}"
    )
    print(
        json.dumps(
            {
                "benchmark": "hooks",
                "metrics": {
                    "commit_ms_median_without": round(med_without, 2),
                    "commit_ms_median_with": round(med_with, 2),
                    "commit_ms_added_median": round(med_with - med_without, 2),
                    "commit_ms_p99_with": round(pct(with_hooks, 0.99) * 1000, 2),
                    "hook_script_ms_median": round(statistics.median(script) * 1000, 2),
                    "events_queued": queued,
                },
                "samples": samples,
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            }
        )
    )


if __name__ == "__main__":
    main()
