"""Build a demo repository, start nexusd on it, drop a plan request, print the response."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

FILES = {
    "kitchen/__init__.py": "",
    "kitchen/shelves.py": '''\
        """Shelves that hold orders until a courier picks them up."""

        import threading


        class Shelf:
            """A shelf with a capacity; the overflow shelf takes what others cannot."""

            def __init__(self, name: str, capacity: int) -> None:
                self.name = name
                self.capacity = capacity
                self.orders: list[str] = []
                self.lock = threading.Lock()

            def put(self, order: str) -> bool:
                with self.lock:
                    if len(self.orders) >= self.capacity:
                        return False
                    self.orders.append(order)
                    return True


        def place(order: str, shelf: Shelf, overflow: Shelf) -> str:
            """Put an order on its shelf, or on the overflow shelf when full."""
            if shelf.put(order):
                return shelf.name
            if overflow.put(order):
                return overflow.name
            raise RuntimeError(f"order {order} lost: overflow full")
        ''',
    "tests/__init__.py": "",
    "tests/test_shelves.py": """\
        import unittest

        from kitchen.shelves import Shelf, place


        class ShelfTest(unittest.TestCase):
            def test_overflow_takes_extra_orders(self) -> None:
                hot, overflow = Shelf("hot", 1), Shelf("overflow", 2)
                self.assertEqual(place("a", hot, overflow), "hot")
                self.assertEqual(place("b", hot, overflow), "overflow")
        """,
    ".nexus/config.yaml": """\
        checks:
          - name: unit-tests
            run: python3 -m unittest discover -s tests -q
            timeout: 60
        """,
}

LESSON = (
    "Never hold two shelf locks at once: the courier thread takes them in the other order "
    "and placement deadlocks under contention."
)

REQUEST = """\
#### 📈 CYCLE 2 CONTEXT (filled by Executor, served to Planner)

[🔢 CYCLE_NUMBER]     2
[📂 PROJECT]          kitchen-sim
[🗺️ PREVIOUS GOAL (Cycle 1)] Add an overflow shelf
[✅ PREVIOUS OUTCOME (Cycle 1)] Overflow shelf added; unit test passes
[🚧 CURRENT BLOCKERS] An order is lost on the overflow shelf under contention
[🎯 NEXT GOAL (Cycle 2)] Make order placement thread-safe across the hot and overflow shelves
[📜 HISTORY PATH]      none
[⏳ TIME BOX]          1 hour
[📎 RELEVANT ARTIFACTS] kitchen/shelves.py, tests/test_shelves.py
[🗒️ SCRATCHPAD DELTA] none
[🔍 AVAILABLE MCP TOOLS] none
[🔖 ADR LINK] none
---
#### 📞 EXECUTOR ➡️ PLANNER QUESTIONS / REQUESTS (optional, filled by Executor)
[❓ BLOCKER SOLUTIONS]        How do I reproduce the lost order deterministically?
---
#### 📝 PLANNER RESPONSE FOR CYCLE 2 (filled by Planner, shipped to Executor)
"""


def run(cwd: Path, *args: str) -> str:
    """Run a command, echo it, fail loudly."""
    print(f"$ {' '.join(args)}", flush=True)
    proc = subprocess.run(args, cwd=cwd, text=True, capture_output=True, check=False)
    if proc.stdout.strip():
        print(textwrap.indent(proc.stdout.rstrip(), "  "), flush=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        raise SystemExit(f"demo: `{' '.join(args)}` failed with exit code {proc.returncode}")
    return proc.stdout


def wait_for_model(root: Path, timeout: float = 60.0) -> None:
    """Let the daemon finish loading the embedding model, so memory search is hybrid."""
    from nexusd.memory.client import ask
    from nexusd.paths import find_repo

    socket_path = find_repo(root).socket_path
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        answer = ask(socket_path, {"op": "ping"}, timeout=5.0)
        if answer and answer.get("status") in ("ready", "unavailable"):
            print(f"daemon's embedding model: {answer['status']}", flush=True)
            return
        time.sleep(0.2)


def main() -> None:
    """Run the demo end to end."""
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="nexusd-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"demo repository: {root}")
    nexusd = [sys.executable, "-m", "nexusd"]
    if not (root / ".git").exists():
        run(root, "git", "init", "-q", "-b", "main")
        run(root, "git", "config", "user.name", "nexusd demo")
        run(root, "git", "config", "user.email", "demo@nexusd.invalid")
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    run(root, *nexusd, "init")
    if LESSON not in (root / "MEMORY.md").read_text(encoding="utf-8"):
        # Indexed right away (no daemon yet: this loads the packaged model once).
        run(root, *nexusd, "memory", "add", LESSON, "--category", "Lessons")
    run(root, "git", "add", "-A")
    run(root, "git", "commit", "-q", "-m", "kitchen-sim: shelves and overflow")
    run(root, *nexusd, "start")
    try:
        wait_for_model(root)
        stamp = time.strftime("%Y-%m-%dT%H_%M_%S", time.gmtime())
        request = root / ".scratchpad_logs" / f"{stamp}_plan_request.md"
        response = request.with_name(f"{stamp}_plan_response.md")
        request.write_text(REQUEST, encoding="utf-8")
        print(f"wrote {request.relative_to(root)}; waiting for the daemon's response…", flush=True)
        started = time.monotonic()
        while not response.exists() and time.monotonic() - started < 120:
            time.sleep(0.05)
        if not response.exists():
            run(root, *nexusd, "logs", "-n", "30")
            raise SystemExit("demo: no response within 120 s; see the log above")
        print(f"response after {time.monotonic() - started:.2f} s: {response.relative_to(root)}\n")
        print(response.read_text(encoding="utf-8"))
        run(root, *nexusd, "status")
    finally:
        run(root, *nexusd, "stop")


if __name__ == "__main__":
    main()
