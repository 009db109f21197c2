"""Idle cost of a running daemon: CPU time and memory syncs while nothing changes.

    python benchmarks/daemon_idle.py [--quick] [--seconds N]

Builds a small repository (`nexusd init`, a MEMORY.md with lessons, a daily note),
starts the daemon through the CLI with the default configuration (memory and code
index on), waits until the model is loaded and the start-up work is done, then
samples the daemon's CPU time (its own and its reaped children's, from /proc) in
10-second windows for 60 s (`--quick`: 3 windows of 5 s). It also counts the
`memory synced` log lines in that time: goal 0 (nothing changed), and CPU near 0.
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from _daemon_common import make_memory_repo, nexusd, own_git_config, wait_ready

from nexusd.paths import find_repo

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime + cutime + cstime of `pid`, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / TICKS


def syncs_logged(log_file: Path) -> int:
    try:
        lines = log_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    return sum(1 for line in lines if '"msg": "memory synced"' in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 windows of 5 s")
    parser.add_argument("--seconds", type=float, default=None, help="total idle time measured")
    opts = parser.parse_args()
    window = 5.0 if opts.quick else 10.0
    total = opts.seconds or (15.0 if opts.quick else 60.0)
    windows = max(1, round(total / window))
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        own_git_config(base)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        root = make_memory_repo(base, "idle")
        layout = find_repo(root)
        nexusd(root, "start")
        try:
            pid = int(layout.pidfile.read_text().strip())
            wait_ready(root, 180.0)
            time.sleep(3.0)  # warm-up: the last start-up syncs and the status writer settle
            syncs_before = syncs_logged(layout.log_file)
            percents: list[float] = []
            start_cpu = cpu_seconds(pid)
            for _ in range(windows):
                t0, c0 = time.monotonic(), cpu_seconds(pid)
                time.sleep(window)
                t1, c1 = time.monotonic(), cpu_seconds(pid)
                percents.append(100.0 * (c1 - c0) / (t1 - t0))
            idle_cpu = cpu_seconds(pid) - start_cpu
            syncs = syncs_logged(layout.log_file) - syncs_before
        finally:
            nexusd(root, "stop")
    measured = window * windows
    print(f"daemon idle for {measured:.0f} s ({windows} windows of {window:.0f} s), 2 cores")
    print(f"{'metric':<28}{'value':>12}")
    print(f"{'cpu seconds used':<28}{idle_cpu:>12.3f}")
    print(f"{'cpu % median':<28}{statistics.median(percents):>12.2f}")
    print(f"{'cpu % max':<28}{max(percents):>12.2f}")
    print(f"{'memory syncs logged':<28}{syncs:>12d}")
    result = {
        "benchmark": "daemon_idle",
        "metrics": {
            "idle_seconds": measured,
            "idle_cpu_seconds": round(idle_cpu, 3),
            "idle_cpu_percent_median": round(statistics.median(percents), 3),
            "idle_cpu_percent_max": round(max(percents), 3),
            "idle_memory_syncs": syncs,
        },
        "samples": windows,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
