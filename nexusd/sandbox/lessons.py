"""Learn from check history: recurring failures become lessons, fixed ones solutions.

Each cycle's results are recorded per check in `<git-common-dir>/nexus/state/
check_history.json`. The same failure signature in `RECUR` consecutive cycles
yields one lesson (once per streak); a check that failed and now passes yields a
crystallized entry with the problem, its signature and the diffstat between the
failing and the passing snapshot. `evaluate` is pure; `pending_lessons` is the
thin shell that reads/writes the state and asks git for the diffstat. The caller
appends each `Lesson.markdown` to MEMORY.md (through the memory API).
"""

from __future__ import annotations

import fcntl
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nexusd.atomic import atomic_write_text
from nexusd.paths import RepoLayout
from nexusd.sandbox.critic import classify
from nexusd.sandbox.result import CheckResult

RECUR = 3
KEEP_RUNS = 10
STATE_FILE = "check_history.json"


@dataclass(frozen=True)
class Lesson:
    """Text to append to MEMORY.md: a `lesson` (recurring) or a `solution` (fixed)."""

    kind: str
    check: str
    signature: str
    markdown: str


def evaluate(
    history: Mapping[str, Any], results: Sequence[CheckResult], now: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Pure: (new history, triggered events); events lack the diffstat the shell adds."""
    new = {name: dict(entry) for name, entry in history.items()}
    events: list[dict[str, Any]] = []
    for result in results:
        if result.status == "error":
            continue  # the sandbox failed, not the code: nothing to learn
        failure = classify(result)
        entry = new.setdefault(result.name, {"runs": [], "lesson_for": None})
        runs = list(entry.get("runs", []))
        previous = runs[-1] if runs else None
        run = {
            "at": now,
            "status": result.status,
            "signature": "" if failure.kind == "passed" else failure.signature(result.name),
            "summary": failure.summary,
            "location": failure.location,
            "tree": result.tree,
        }
        runs = [*runs, run][-KEEP_RUNS:]
        entry["runs"] = runs
        if run["status"] == "passed":
            entry["lesson_for"] = None
            if previous is not None and previous["status"] != "passed":
                events.append(
                    {"kind": "solution", "check": result.name, "failed": previous, "passed": run}
                )
            continue
        streak = runs[-RECUR:]
        same = len(streak) == RECUR and all(r["signature"] == run["signature"] for r in streak)
        if same and entry.get("lesson_for") != run["signature"]:
            entry["lesson_for"] = run["signature"]
            events.append({"kind": "lesson", "check": result.name, "runs": streak})
    return new, events


def render(event: Mapping[str, Any], diffstat: str = "") -> Lesson:
    """The MEMORY.md entry for one event."""
    check = event["check"]
    if event["kind"] == "lesson":
        runs = event["runs"]
        last = runs[-1]
        evidence = "\n".join(f"  - {r['at']} tree `{r['tree'][:12]}`: {r['summary']}" for r in runs)
        text = (
            f"### Lesson: `{check}` keeps failing the same way\n"
            f"- **Signature:** `{last['signature']}`\n"
            f"- **Failure:** {last['summary']}"
            + (f" at `{last['location']}`" if last["location"] else "")
            + "\n"
            f"- **Evidence ({len(runs)} consecutive cycles):**\n{evidence}\n"
            "- **Lesson:** the last attempts did not touch the cause; fix this first "
            "before new work, and check the approach rather than retrying it.\n"
        )
        return Lesson("lesson", check, last["signature"], text)
    failed, passed = event["failed"], event["passed"]
    text = (
        f"### Solution: `{check}` fixed\n"
        f"- **Problem:** {failed['summary']}"
        + (f" at `{failed['location']}`" if failed["location"] else "")
        + "\n"
        f"- **Error signature:** `{failed['signature']}`\n"
        f"- **Fixed between:** tree `{failed['tree'][:12]}` (failing, {failed['at']}) and "
        f"`{passed['tree'][:12]}` (passing, {passed['at']})\n"
        f"- **What changed:**\n```\n{diffstat.strip() or '(no diff available)'}\n```\n"
    )
    return Lesson("solution", check, failed["signature"], text)


def diffstat(layout: RepoLayout, old_tree: str, new_tree: str) -> str:
    """`git diff --stat` between two snapshot trees ('' when git cannot say)."""
    if not old_tree or not new_tree:
        return ""
    proc = subprocess.run(
        ["git", "diff", "--stat", old_tree, new_tree],
        cwd=layout.root,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else ""


def pending_lessons(
    layout: RepoLayout, results: Sequence[CheckResult], *, now: datetime | None = None
) -> tuple[Lesson, ...]:
    """Record one cycle's results; return the lessons and solutions it triggers."""
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    path = layout.state_dir / STATE_FILE
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with (layout.state_dir / f".{STATE_FILE}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            history = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except ValueError:
            history = {}  # derived state: a corrupt file just restarts the history
        new, events = evaluate(history, results, stamp)
        atomic_write_text(path, json.dumps(new, indent=2, sort_keys=True) + "\n")
    lessons = []
    for event in events:
        stat = ""
        if event["kind"] == "solution":
            stat = diffstat(layout, event["failed"]["tree"], event["passed"]["tree"])
        lessons.append(render(event, stat))
    return tuple(lessons)
