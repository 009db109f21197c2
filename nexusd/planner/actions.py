"""The plan: at most `planner.max_actions` atomic actions, review first, checks last."""

from __future__ import annotations

from dataclasses import dataclass

from nexusd.planner.artifacts import ArtifactFact
from nexusd.planner.librarian import BlockerFacts, ContextBundle

MAX_CHANGE_ACTIONS = 3
MAX_BLOCKER_ACTIONS = 3


@dataclass(frozen=True)
class Action:
    """One atomic action: what to do, on which files, and how to know it is done."""

    title: str
    files: tuple[str, ...]
    how: str
    verify: str


def is_test_path(path: str) -> bool:
    """Whether a repository path looks like a test file or folder."""
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test_")
        or name.endswith(("_test.py", ".test.js", ".test.ts", ".spec.ts", ".spec.js"))
        or "/tests/" in f"/{path}"
        or "/test/" in f"/{path}"
    )


def short(text: str, limit: int = 90) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def code(items: tuple[str, ...] | list[str]) -> str:
    """`a`, `b` and `c` as inline code, comma-separated."""
    return ", ".join(f"`{item}`" for item in items)


def check_commands(bundle: ContextBundle) -> list[str]:
    """The commands that verify the work: configured checks, else a sensible default."""
    commands = [f"{c['name']}: `{c['run']}`" for c in bundle.checks]
    if commands:
        return [*commands, "all of them at once: `nexusd check`"]
    tests = [a.rel for a in bundle.artifacts if a.rel and is_test_path(a.rel)]
    target = " ".join(t for t in tests if t)
    return [f"`pytest -q {target}`" if target else "`pytest -q`"]


def _review(bundle: ContextBundle) -> Action:
    req, prev = bundle.request, bundle.previous
    n = req.cycle
    label = f"cycle {n - 1}" if n else "the previous cycle"
    if prev is not None:
        first = f" (first: “{short(prev.actions[0], 70)}”)" if prev.actions else ""
        outcome = (
            f" The request reports: “{short(req.previous_outcome, 140)}”."
            if (req.previous_outcome)
            else ""
        )
        return Action(
            f"Review {label}: compare its plan with what happened",
            (prev.path,),
            f"Its response planned {len(prev.actions)} actions{first}.{outcome} "
            "Mark each action done, partly done or not done, with the evidence.",
            "every action of the previous plan is marked, and unfinished ones are carried "
            "into this plan or dropped on purpose",
        )
    if req.previous_goal or req.previous_outcome:
        return Action(
            f"Review {label}: goal “{short(req.previous_goal or 'not stated', 70)}”",
            (),
            f"Outcome reported: “{short(req.previous_outcome or 'not stated', 140)}”. "
            "No previous response file was found, so confirm the outcome from `git log` and "
            "the test results.",
            "the outcome is confirmed by a commit or a test run you can name",
        )
    git = bundle.git
    where = f"branch `{git.branch}`" if git.branch else "a detached HEAD"
    head = f" at `{git.head[:10]}` (“{short(git.head_subject, 60)}”)" if git.head else ""
    return Action(
        "Review the starting point (no previous cycle found)",
        (),
        f"You are on {where}{head} with {git.dirty_total} uncommitted change(s). "
        "Confirm they belong to this goal, or commit or stash them first.",
        "`git status --short` shows only changes meant for this cycle",
    )


def _blocker_action(index: int, blocker: BlockerFacts, files: tuple[str, ...]) -> Action:
    where = tuple(dict.fromkeys(h.path for h in blocker.evidence)) or files
    diagnostic = next(
        (m.practice.diagnostic for m in blocker.practices if m.practice.diagnostic), ""
    )
    how = diagnostic.replace("{files}", code(where) if where else "the affected code") or (
        "Write the smallest command or test that shows it, and run it three times to see "
        "whether it always fails."
    )
    return Action(
        f"Reproduce blocker {index}: {short(blocker.text, 70)}",
        where,
        how,
        "a command that shows the blocker every time (or a measured failure rate), "
        "written down before any fix",
    )


def _diagnose_action(bundle: ContextBundle, files: tuple[str, ...]) -> Action | None:
    """Without blockers, the goal's best-matching practice may still say how to find the cause."""
    for match in bundle.practices:
        practice = match.practice
        if practice.diagnostic and not practice.generic:
            where = code(files) if files else "the affected code"
            return Action(
                f"Find the cause first ({practice.title.lower()})",
                files,
                practice.diagnostic.replace("{files}", where),
                "the result of the diagnostic is written down and says which explanation holds",
            )
    return None


def _change_action(art: ArtifactFact, bundle: ContextBundle) -> Action:
    assert art.rel is not None
    hits = [h for h in bundle.goal_evidence if h.path == art.rel]
    if hits:
        start = f"Start at line {hits[0].line} (mentions {code(list(hits[0].matched))}). "
    elif art.symbols:
        start = f"Its top-level symbols: {code([s.name for s in art.symbols[:5]])}. "
    else:
        start = ""
    commits = bundle.git.recent.get(art.rel, ())
    last = (
        f" Last changed in `{commits[0].sha}` (“{short(commits[0].subject, 50)}”)."
        if commits
        else ""
    )
    return Action(
        f"Change `{art.rel}` toward the goal",
        (art.rel,),
        f"{start}{art.lines} lines.{last} Keep the change small and in this file.",
        "the tests covering this file pass and `git diff --stat` shows only planned files",
    )


def _create_action(missing: tuple[str, ...]) -> Action:
    return Action(
        f"Create the missing artifact(s) {code(list(missing))}",
        missing,
        "They are listed as relevant but do not exist yet; create them with the smallest "
        "content that the next action builds on.",
        "the files exist and are imported or run by a test",
    )


def _locate_action(bundle: ContextBundle) -> Action:
    words = bundle.goal_words[:4]
    grep = " ".join(f"-e {w}" for w in words) if words else "-e <word of the goal>"
    return Action(
        "Locate the code the goal is about",
        (),
        f"No relevant artifact was given or found; search with `git grep -n -i {grep}` and "
        "list the files that matter.",
        "a list of files, added as `artifacts` to the next request",
    )


def _code_action(bundle: ContextBundle) -> Action:
    """Start where the code index points: the top file and its best units, by name."""
    sources = [h for h in bundle.code_hits if not is_test_path(h.path)] or list(bundle.code_hits)
    top = sources[0]
    units = ", ".join(f"`{u.qualname}` (line {u.start})" for u in top.units[:3])
    why = "; ".join(top.reasons[:2]) or "it shares the request's rarest words"
    others = code([h.path for h in sources[1:3]])
    then = f" If the cause is not there, look next at {others}." if others else ""
    start = f"Read {units} first: " if units else ""
    return Action(
        f"Confirm the cause in `{top.path}`",
        tuple(h.path for h in sources[:3]),
        f"{start}the code index ranks this file first because {why}.{then}",
        "you can name the function to change and the input that shows the problem",
    )


def _test_action(bundle: ContextBundle, tests: tuple[str, ...]) -> Action:
    return Action(
        f"Extend {code(list(tests[:2]))}" if tests else "Pin the goal with a test",
        tests,
        "Write a test that fails now and passes when the goal is met: "
        f"“{short(bundle.request.goal, 100)}”.",
        "the new test fails before the change and passes after it",
    )


def plan_actions(bundle: ContextBundle, max_actions: int) -> tuple[Action, ...]:
    """Review, then blockers, missing files, changes and tests by priority, then the checks."""
    budget = max(max_actions, 2) - 2
    arts = [a for a in bundle.artifacts if a.rel is not None]
    sources = [a for a in arts if a.status == "ok" and not is_test_path(a.rel or "")]
    tests = tuple(a.rel for a in arts if a.status == "ok" and a.rel and is_test_path(a.rel))
    missing = tuple(a.rel for a in arts if a.status == "missing" and a.rel)
    files = tuple(a.rel for a in sources if a.rel)
    # (priority, phase, action): the best `budget` by priority, then shown in phase order.
    candidates: list[tuple[int, int, Action]] = []
    for i, blocker in enumerate(bundle.blockers[:MAX_BLOCKER_ACTIONS], start=1):
        candidates.append((i * 2 - 1, 10 + i, _blocker_action(i, blocker, files)))
    if missing:
        candidates.append((4, 20, _create_action(missing)))
    diagnose = None if bundle.blockers else _diagnose_action(bundle, files + missing)
    if diagnose is not None:
        candidates.append((1, 25, diagnose))
    for j, art in enumerate(sources[:MAX_CHANGE_ACTIONS]):
        candidates.append((2 + j * 3, 30 + j, _change_action(art, bundle)))
    if not sources and not missing:
        action = _code_action(bundle) if bundle.code_hits else _locate_action(bundle)
        candidates.append((2, 30, action))
    if not tests:
        tests = tuple(h.path for h in bundle.code_hits if is_test_path(h.path))[:2]
    candidates.append((3, 40, _test_action(bundle, tests)))
    chosen = sorted(candidates, key=lambda c: c[0])[:budget]
    middle = [action for _, _, action in sorted(chosen, key=lambda c: c[1])]
    checks = Action(
        "Run the checks",
        (),
        "Run " + "; ".join(check_commands(bundle)) + ".",
        "every check passes; the results go into the next request's previous outcome",
    )
    return (_review(bundle), *middle, checks)


def render_actions(actions: tuple[Action, ...]) -> str:
    """The plan as a numbered markdown list; each item has files and a verification."""
    lines: list[str] = []
    for number, action in enumerate(actions, start=1):
        lines.append(f"{number}. **{action.title}.**")
        if action.files:
            lines.append(f"   - Files: {code(list(action.files))}")
        lines.append(f"   - How: {action.how}")
        lines.append(f"   - Verify: {action.verify}.")
    return "\n".join(lines)
