"""Learn from check history: recurring failures become lessons, fixed ones solutions.

Each cycle's results are recorded per check in `<git-dir>/nexus/state/
check_history.json`. The same failure signature in `RECUR` consecutive attempts
yields one lesson (once per streak); a check that failed and now passes yields a
crystallized entry with the problem, its signature and the diffstat between the
failing and the passing snapshot. An attempt is a change of the user's files:
nexusd's own files (responses, MEMORY.md, daily notes) change with every cycle and
never count, neither as an attempt nor in a diffstat. `evaluate` is pure;
`pending_lessons` is the thin shell that reads/writes the state and asks git. The
caller (only the daemon's critic) appends each `Lesson.markdown`, one list item of
well-formed markdown, to MEMORY.md through the memory API.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nexusd.atomic import atomic_write_text
from nexusd.git import try_git
from nexusd.paths import RepoLayout
from nexusd.sandbox.reflection import classify
from nexusd.sandbox.result import CheckResult

RECUR = 3
KEEP_RUNS = 10
STATE_FILE = "check_history.json"
# Paths nexusd writes in the work tree; the watched request folders are added by the caller.
OWN_PATHS: tuple[str, ...] = ("MEMORY.md", "memory/daily")


@dataclass(frozen=True)
class Lesson:
    """Text to append to MEMORY.md: a `lesson` (recurring) or a `solution` (fixed)."""

    kind: str
    check: str
    signature: str
    markdown: str


def evaluate(
    history: Mapping[str, Any],
    results: Sequence[CheckResult],
    now: str,
    user_keys: Mapping[str, str] | None = None,
    request: str = "",
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Pure: (new history, triggered events); events lack the diffstat the shell adds.

    `user_keys` maps a result's tree to the key of the user's files in it (the tree
    itself when absent): a run whose key equals the previous run's is the same attempt,
    and so is a run for the same `request` (path@sha256) as the previous one: answering
    a request again is not a new failure.
    """
    keys = user_keys or {}
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
            "user": keys.get(result.tree, result.tree),
            "request": request,
        }
        same_request = bool(request) and previous is not None and previous.get("request") == request
        if same_request or (
            previous is not None and previous.get("user", previous["tree"]) == run["user"]
        ):
            # Nothing of the user's changed: the same attempt again (another request, a
            # retry), whatever it printed. It neither extends a streak nor fixes anything.
            continue
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
    """The MEMORY.md entry for one event: one list item (its first line is the item's text)."""
    check = event["check"]
    if event["kind"] == "lesson":
        runs = event["runs"]
        last = runs[-1]
        where = f" at `{last['location']}`" if last["location"] else ""
        evidence = "\n".join(
            f"  - {r['at']}, tree `{r['tree'][:12]}`: {_inline(r['summary'])}" for r in runs
        )
        text = (
            f"**Lesson:** check `{check}` failed the same way in {len(runs)} consecutive "
            f"attempts: {_inline(last['summary'])}{where}.\n"
            f"- Signature: `{_inline(last['signature'])}`\n"
            f"- Evidence:\n{evidence}\n"
            "- What to do: the last attempts did not touch the cause; fix it before new "
            "work, and change the approach rather than retrying it.\n"
        )
        return Lesson("lesson", check, last["signature"], text)
    failed, passed = event["failed"], event["passed"]
    where = f" at `{failed['location']}`" if failed["location"] else ""
    stat = diffstat.strip("\n").rstrip() or "(no diff available)"
    changed = "\n".join(f"      {line}" for line in stat.splitlines())
    text = (
        f"**Solution:** check `{check}` passes again: {_inline(failed['summary'])}{where} "
        "is fixed.\n"
        f"- Fixed between tree `{failed['tree'][:12]}` (failing, {failed['at']}) and "
        f"`{passed['tree'][:12]}` (passing, {passed['at']}).\n"
        f"- What changed (your files):\n\n{changed}\n\n"
        f"- Error signature: `{_inline(failed['signature'])}`\n"
    )
    return Lesson("solution", check, failed["signature"], text)


def _inline(text: str) -> str:
    # One line, no backticks: the text goes inside a list item or a code span.
    return " ".join(str(text).replace("`", "'").split())[:300]


def _own_pathspecs(own: Sequence[str]) -> list[str]:
    return [f":(exclude){path.strip('/')}" for path in own if path.strip("/")]


def _git(layout: RepoLayout, *args: str) -> str | None:
    out = try_git(layout.root, *args)
    return None if out is None else out.decode("utf-8", "replace")


def diffstat(
    layout: RepoLayout, old_tree: str, new_tree: str, own: Sequence[str] = OWN_PATHS
) -> str:
    """`git diff --stat` of the user's files between two snapshot trees ('' when git cannot
    say)."""
    if not old_tree or not new_tree:
        return ""
    stat = _git(layout, "diff", "--stat", old_tree, new_tree, "--", ".", *_own_pathspecs(own))
    return stat or ""


def user_key(layout: RepoLayout, tree: str, own: Sequence[str] = OWN_PATHS) -> str:
    """A key of the user's files in a snapshot tree: equal keys, same files (nexusd's own
    files left out). The tree itself when git cannot list it."""
    if not tree:
        return tree
    listing = _git(layout, "ls-tree", "-r", "--full-tree", tree)
    if listing is None:
        return tree
    skip = tuple(p.strip("/") for p in own if p.strip("/"))
    kept = [line for line in listing.splitlines() if not _owned(line.split("\t", 1)[-1], skip)]
    return hashlib.sha1("\n".join(kept).encode("utf-8", "surrogateescape")).hexdigest()


def _owned(path: str, own: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in own)


def pending_lessons(
    layout: RepoLayout,
    results: Sequence[CheckResult],
    *,
    now: datetime | None = None,
    own: Sequence[str] = OWN_PATHS,
    request: str = "",
    record: bool = True,
) -> tuple[Lesson, ...]:
    """Record one cycle's results; return the lessons and solutions it triggers.

    `own` lists nexusd's files in the work tree (MEMORY.md, daily notes, the request
    folders): changes to them are not the user's attempts. `record=False` only tells
    what recording would trigger (a response names its lessons before it is written;
    they are recorded once it is)."""
    keys = {r.tree: user_key(layout, r.tree, own) for r in results if r.tree}
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    path = layout.state_dir / STATE_FILE
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with (layout.state_dir / f".{STATE_FILE}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            history = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except ValueError:
            history = {}  # derived state: a corrupt file just restarts the history
        new, events = evaluate(history, results, stamp, keys, request)
        if record:
            atomic_write_text(path, json.dumps(new, indent=2, sort_keys=True) + "\n")
    lessons = []
    for event in events:
        stat = ""
        if event["kind"] == "solution":
            stat = diffstat(layout, event["failed"]["tree"], event["passed"]["tree"], own)
        lessons.append(render(event, stat))
    return tuple(lessons)
