"""Protocol latency: request file written → response file complete, daemon warm.

Builds a demo repository in a temp dir, starts a real daemon (`python -m nexusd
start`), warms it up, then writes requests one at a time and waits for each
response (inotify via watchdog, confirmed by the response's request_sha256).
Baseline, interleaved: the same pipeline called in this process on a request in
an unwatched folder (`answer_request`), i.e. the cost without the daemon.

    python benchmarks/protocol_latency.py [--quick] [--requests N]

Goal (measured, never asserted): p50 ≤ 100 ms, p99 ≤ 300 ms.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

ROOT = Path(__file__).resolve().parents[1]


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), out.get("PYTHONPATH", "")) if p)
    return out


def nexusd(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", *args],
        cwd=repo,
        env=env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 7):
        raise SystemExit(f"nexusd {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(base: Path) -> Path:
    repo = base / "demo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@nexusd.invalid")
    git(repo, "config", "user.name", "bench")
    (repo / "README.md").write_text("# demo\n", encoding="utf-8")
    (repo / "src" / "app.py").write_text(
        "def login(user):\n    return user\n\n\nclass Session:\n    pass\n", encoding="utf-8"
    )
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "demo")
    (repo / ".scratchpad_logs").mkdir()
    (repo / "unwatched").mkdir()
    return repo


def wait_for_model(repo: Path, timeout: float = 120.0) -> str:
    """Wait until the daemon's embedding model has loaded: a warm daemon searches memory
    with it (while it loads, the import competes with every request for the CPU)."""
    from nexusd.memory.client import ask
    from nexusd.paths import find_repo

    socket_path = find_repo(repo).socket_path
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = ask(socket_path, {"op": "ping"}, timeout=5.0) if socket_path.exists() else None
        if answer and answer.get("status") in ("ready", "unavailable"):
            return str(answer["status"])
        time.sleep(0.2)
    raise SystemExit(f"the daemon's embedding model did not load within {timeout:.0f} s")


def request_text(i: int) -> str:
    return (
        "---\n"
        f"cycle: {i % 9 + 1}\n"
        f"goal: Fix the flaky login test, attempt {i}\n"
        "blockers:\n  - the session expires too early\n"
        "artifacts:\n  - src/app.py\n"
        "---\n\nPlease plan the next cycle.\n"
    )


class ResponseWaiter(FileSystemEventHandler):
    """Sets an event when the expected response appears (it is written by rename)."""

    def __init__(self) -> None:
        self.expected: str = ""
        self.done = threading.Event()

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = os.fsdecode(getattr(event, "dest_path", "") or event.src_path)
        if path == self.expected:
            self.done.set()


def answered(response: Path, sha: str) -> bool:
    try:
        head = response.read_text(encoding="utf-8")[:2000]
    except (FileNotFoundError, UnicodeDecodeError):
        return False
    return f"request_sha256: {sha}" in head


def daemon_sample(folder: Path, i: int, waiter: ResponseWaiter, timeout: float = 30.0) -> float:
    request = folder / f"bench-{i:05d}_plan_request.md"
    response = folder / f"bench-{i:05d}_plan_response.md"
    data = request_text(i).encode()
    sha = hashlib.sha256(data).hexdigest()
    waiter.expected = str(response)
    waiter.done.clear()
    with request.open("wb") as fh:
        fh.write(data)
    start = time.perf_counter()  # the request file is written and closed
    deadline = start + timeout
    while not answered(response, sha):
        waiter.done.wait(0.005)
        waiter.done.clear()
        if time.perf_counter() > deadline:
            raise SystemExit(f"no response to {request.name} within {timeout} s")
    return (time.perf_counter() - start) * 1000.0


def baseline_sample(repo: Path, i: int) -> float:
    from nexusd.config import load_config
    from nexusd.paths import find_repo
    from nexusd.planner.pipeline import answer_request

    layout = find_repo(repo)
    config = load_config(layout.root)
    request = repo / "unwatched" / f"base-{i:05d}_plan_request.md"
    request.write_bytes(request_text(i).encode())
    start = time.perf_counter()
    outcome = answer_request(request, layout, config)
    elapsed = (time.perf_counter() - start) * 1000.0
    if outcome.status != "ok":
        raise SystemExit(f"baseline request failed: {outcome.message}")
    return elapsed


def daemon_phases(folder: Path, count: int) -> dict[str, float]:
    """Median of each phase the daemon's responses report in their `timings_ms`."""
    from nexusd.protocol.reading import response_meta

    seen: dict[str, list[float]] = {}
    for i in range(count):
        _, meta = response_meta(folder / f"bench-{i:05d}_plan_response.md")
        timings = (meta or {}).get("timings_ms")
        for name, ms in timings.items() if isinstance(timings, dict) else ():
            seen.setdefault(str(name), []).append(float(ms))
    return {name: statistics.median(values) for name, values in seen.items()}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 requests (smoke run)")
    parser.add_argument("--requests", type=int, default=None, help="samples (default 200)")
    args = parser.parse_args()
    count = args.requests or (50 if args.quick else 200)
    sys.path.insert(0, str(ROOT))

    base = Path(tempfile.mkdtemp(prefix="nexusd-bench-"))
    repo = make_repo(base)
    folder = repo / ".scratchpad_logs"
    observer = Observer()
    waiter = ResponseWaiter()
    observer.schedule(waiter, str(folder))
    observer.start()
    try:
        print(nexusd(repo, "start").strip())
        print(f"daemon's embedding model: {wait_for_model(repo)}")
        for i in range(10):  # warm-up: imports, caches, first git calls
            daemon_sample(folder, 100_000 + i, waiter)
            baseline_sample(repo, 100_000 + i)
        daemon_ms: list[float] = []
        base_ms: list[float] = []
        for i in range(count):  # interleaved: A B A B …
            daemon_ms.append(daemon_sample(folder, i, waiter))
            base_ms.append(baseline_sample(repo, i))
        status = json.loads(nexusd(repo, "status", "--json"))
        phases = daemon_phases(folder, count)
    finally:
        observer.stop()
        observer.join()
        nexusd(repo, "stop")
        shutil.rmtree(base, ignore_errors=True)

    rows = [("daemon: written → response", daemon_ms), ("baseline: answer_request()", base_ms)]
    print(f"\n{'measure':<30} {'p50':>8} {'p99':>8} {'max':>8} {'n':>5}   (ms)")
    for name, values in rows:
        print(
            f"{name:<30} {statistics.median(values):8.1f} {pct(values, 0.99):8.1f}"
            f" {max(values):8.1f} {len(values):5d}"
        )
    p50, base50 = statistics.median(daemon_ms), statistics.median(base_ms)
    print(f"daemon overhead (p50 difference): {p50 - base50:.1f} ms; goal p50 ≤ 100, p99 ≤ 300")
    print(f"daemon counted: answered={status.get('answered')} errors={status.get('errors')}")
    # Where the daemon's time goes (its responses' `timings_ms`; grounding phases run beside
    # the librarian, so the critical path is the longest of them, not their sum).
    print("daemon phases, p50 ms: " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    result = {
        "benchmark": "protocol_latency",
        "metrics": {
            "p50_ms": round(p50, 1),
            "p99_ms": round(pct(daemon_ms, 0.99), 1),
            "max_ms": round(max(daemon_ms), 1),
            "baseline_pipeline_p50_ms": round(base50, 1),
            "ratio_vs_pipeline": round(p50 / base50, 2) if base50 else None,
        },
        "phases_p50_ms": {k: round(v, 1) for k, v in phases.items()},
        "samples": len(daemon_ms),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
