"""The plan: at most `planner.max_actions` actions that fit the kind of request.

Review first; then the steps of the request's kind in the order that keeps them
consistent (a bug's failing test before its fix, a refactor's green tests before
the restructuring, a baseline before an optimisation); the checks last, or for a
question, the answer. Steps that belong to another kind never appear: a feature
gets no "find the cause", a refactor no "test that fails now", a question no change.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexusd.code.places import is_test_path
from nexusd.config.ranges import RANGES
from nexusd.context.artifacts import ArtifactFact
from nexusd.context.intent import EXCEPTION_NAME, Kind
from nexusd.context.librarian import ContextBundle
from nexusd.context.toolchain import Toolchain, fill
from nexusd.planner.actions import (
    Action,
    Step,
    blocker_action,
    checks_action,
    code,
    code_action,
    create_action,
    goal_line,
    gone_action,
    locate_action,
    review_action,
    short,
)
from nexusd.planner.quoted_trace import quoted_frames, trace_action
from nexusd.protocol.inline import inline_code

MAX_CHANGE_ACTIONS = 3
# The review, one step toward the goal, the checks (or a question's answer): the config's
# floor, which holds for a caller passing its own number too.
MIN_ACTIONS = int(RANGES["planner.max_actions"].low)
MAX_BLOCKER_ACTIONS = 3


@dataclass(frozen=True)
class Wording:
    """How one kind of request words the steps it shares with the others."""

    change: str  # title of a change to a named file; {file}
    change_verify: str
    code: str  # title of the code-index step; {file}
    code_verify: str
    test: str  # title of the test step ("" = no test step); {tests}
    test_how: str  # {goal}
    test_verify: str


WORDING: dict[Kind, Wording] = {
    "bug": Wording(
        "Fix the cause in {file}",
        "the failing test now passes and `git diff --stat` shows only planned files",
        "Confirm the cause in {file}",
        "you can name the function to change and the input that shows the problem",
        "Reproduce the bug with a failing test{tests}",
        "Write the smallest test that fails now because of the bug: “{goal}”.",
        "the test fails for the reported reason before the fix",
    ),
    "feature": Wording(
        "Implement the change in {file}",
        "the new test passes and `git diff --stat` shows only planned files",
        "Find where the change fits in {file}",
        "you can name the function or module the new behaviour belongs in",
        "Specify the new behaviour with a test{tests}",
        "Write a test that describes the finished feature; it fails until it is built: “{goal}”.",
        "the new test fails before the change and passes after it",
    ),
    "refactor": Wording(
        "Restructure {file} in small steps",
        "the same tests pass after every step; no behaviour changed",
        "Map what {file} does before restructuring it",
        "you can list its callers and the tests that cover it",
        "Pin the current behaviour with passing tests{tests}",
        "Run the tests that cover the code, and add tests for any behaviour they miss; they "
        "must pass now, before the restructuring: “{goal}”.",
        "the tests pass before any change, and are the ones rerun after every step",
    ),
    "docs": Wording(
        "Write the documentation in {file}",
        "the text matches the code as it is, and every example in it runs",
        "Read {file}, which the documentation describes",
        "you can name the behaviour, options and defaults the text must cover",
        "",
        "",
        "",
    ),
    "performance": Wording(
        "Optimise the hot path in {file}",
        "the tests pass and the benchmark shows the gain against the baseline",
        "Confirm the hot path in {file}",
        "the profile names the functions that take the time",
        "",
        "",
        "",
    ),
    "question": Wording(
        "Read {file} for the answer",
        "you can quote the lines that answer the question",
        "Read {file} for the answer",
        "you can quote the lines that answer the question",
        "",
        "",
        "",
    ),
}

# Phases order the chosen actions: blockers, creation, a quoted traceback, locating,
# the failing test, diagnosis (a practice's diagnostic runs that test: `git bisect run
# <its command>`), changes.
_PHASE = {
    "create": 20,
    "trace": 21,
    "locate": 22,
    "test": 23,
    "measure": 24,
    "diagnose": 25,
    "change": 30,
}


def _diagnose(
    bundle: ContextBundle, files: tuple[str, ...], test_how: str
) -> tuple[int, Action] | None:
    """For a bug without blockers: a quoted traceback is where the search starts, before
    the ranked files' step; else the goal's best-matching practice may say how to find the
    cause, but not with the plan's own failing test (`test_how`) again, nor by asking for a
    traceback the request quotes or for one where the request says nothing raised."""
    frames = quoted_frames(bundle.request.goal)
    # `ValueError` says something raised as surely as "error" does (a keyword is a prefix).
    raised = EXCEPTION_NAME.search(bundle.request.goal) is not None
    if frames:
        start = trace_action(bundle, frames)
        if start is not None:
            return _PHASE["trace"], start
    for match in bundle.practices:
        practice = match.practice
        if _opening(practice.diagnostic) == _opening(test_how):
            continue
        if practice.diagnostic_when and not (
            set(match.matched) & set(practice.diagnostic_when) or raised
        ):
            continue
        if frames is not None and "traceback" in practice.diagnostic.lower():
            continue  # captured already, though none of its frames is in a ranked file
        if practice.diagnostic and not practice.generic:
            where = code(files) if files else "the affected code"
            # The step says what to do; the practice it comes from is its reason, not its
            # title ("Find the cause first (fail loudly …)" read as one odd instruction).
            how = fill(practice.diagnostic, bundle.toolchain).replace("{files}", where).rstrip()
            return _PHASE["diagnose"], Action(
                "Narrow down the cause",
                files,
                f"{how} (the practice “{practice.title}”)",
                "the result of the diagnostic is written down and says which explanation holds",
                "diagnose",
            )
    return None


def _opening(text: str) -> tuple[str, ...]:
    """A step's first four words: two steps that open alike ask for the same thing."""
    return tuple(text.lower().split()[:4])


def _measure(files: tuple[str, ...], chain: Toolchain) -> list[Action]:
    where = code(files) if files else "the slow path"
    return [
        Action(
            "Measure the baseline",
            (),
            "Write a benchmark script (not a test) that runs the slow operation enough times "
            "to report median, p99 and max, and record the numbers before any change.",
            "the baseline numbers are written down with the command that produced them",
            "measure",
        ),
        Action(
            "Profile the slow path",
            files,
            f"Profile it ({chain.profile}) and list the five functions with the most "
            f"cumulative time in {where}.",
            "the profile names where the time goes; optimise only those functions",
            "diagnose",
        ),
    ]


def _after(kind: Kind, files: tuple[str, ...]) -> list[Action]:
    """Steps that close the work of a kind, before the checks."""
    if kind == "performance":
        return [
            Action(
                "Re-measure against the baseline",
                files,
                "Run the same benchmark on the changed code, in the same session as the "
                "baseline, and compare median and p99.",
                "the gain is measured, not assumed; never assert wall-clock times in tests",
                "measure",
            )
        ]
    if kind == "feature":
        return [
            Action(
                "Document the new behaviour",
                (),
                "Describe it where users look (README, docstring, `--help` text, changelog).",
                "the documentation names the new behaviour and shows one example",
                "document",
            )
        ]
    if kind == "docs":
        return [
            Action(
                "Check the examples and links",
                (),
                "Run every command and code example the text shows, and open every link.",
                "each example runs as written and each link resolves",
                "test",
            )
        ]
    return []


def _change(art: ArtifactFact, bundle: ContextBundle, wording: Wording) -> Action:
    assert art.rel is not None
    hits = [h for h in bundle.goal_evidence if h.path == art.rel]
    # The functions the code index ranks in this file name where to start better than the
    # first line that shares a word with the goal (often the module's docstring).
    units = next((h.units for h in bundle.code_hits if h.path == art.rel), ())
    if units:
        named = ", ".join(f"{inline_code(u.qualname)} (line {u.start})" for u in units[:3])
        start = f"Start at {named}. "
    elif hits:
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
    question = bundle.intent.kind == "question"
    keep = (
        " Change nothing: this cycle answers a question."
        if question
        else (" Keep the change small and in this file.")
    )
    return Action(
        wording.change.format(file=inline_code(art.rel)),
        (art.rel,),
        f"{start}{art.lines} lines.{last}{keep}",
        wording.change_verify,
        "locate" if question else "change",
    )


def _change_found(found: Action, wording: Wording) -> Action:
    """The change itself, where the step before it located the code."""
    where = code(list(found.files[:1])) if found.files else "the files you located"
    return Action(
        wording.change.format(file=where),
        found.files[:1],
        "Make the change where the previous step pointed; keep it small and in as few "
        "files as possible.",
        wording.change_verify,
        "change",
    )


def _test(bundle: ContextBundle, tests: tuple[str, ...], wording: Wording) -> Action:
    where = f" in {code(list(tests[:2]))}" if tests else ""
    return Action(
        wording.test.format(tests=where),
        tests,
        wording.test_how.format(goal=goal_line(bundle)),
        wording.test_verify,
        "test",
    )


def _answer(bundle: ContextBundle) -> Action:
    return Action(
        "Write down the answer, with evidence",
        (),
        f"Answer “{goal_line(bundle)}” citing files and lines (`path:line`); say what "
        "would change the answer. Change no code in this cycle.",
        "the answer cites the lines it rests on; put it in the next request's `previous_outcome`",
        "answer",
    )


def plan_actions(bundle: ContextBundle, max_actions: int) -> tuple[Action, ...]:
    """Review, then the kind's steps by priority (shown in phase order), then the checks;
    at least MIN_ACTIONS, so one step works toward the goal."""
    kind = bundle.intent.kind
    wording = WORDING[kind]
    budget = max(max_actions, MIN_ACTIONS) - 2
    arts = [a for a in bundle.artifacts if a.rel is not None]
    sources = [a for a in arts if a.status == "ok" and not is_test_path(a.rel or "")]
    tests = tuple(a.rel for a in arts if a.status == "ok" and a.rel and is_test_path(a.rel))
    missing = tuple(a.rel for a in arts if a.status == "missing" and a.rel)
    # A missing file git knows the history of was deleted or moved: not one to write anew.
    gone = tuple(p for p in missing if bundle.git.recent.get(p))
    missing = tuple(p for p in missing if p not in gone)
    files = tuple(a.rel for a in sources if a.rel)
    # (priority, phase, action): the best `budget` by priority, then shown in phase order.
    candidates: list[tuple[int, int, Action]] = []
    for i, blocker in enumerate(bundle.blockers[:MAX_BLOCKER_ACTIONS], start=1):
        candidates.append((i * 2 - 1, 10 + i, blocker_action(i, blocker, files, bundle.toolchain)))
    if missing and kind != "question":
        candidates.append((4, _PHASE["create"], create_action(missing)))
    if gone:
        candidates.append((4, _PHASE["create"], gone_action(gone, bundle)))
    traced: str | None = None
    if kind == "bug" and not bundle.blockers:
        diagnose = _diagnose(bundle, files + missing, wording.test_how)
        if diagnose is not None:
            candidates.append((1, *diagnose))
            # The cause is confirmed and fixed where the traceback ends, not in a file
            # that ranks above it on outer frames (`plot.py` calling `scales.py`).
            if diagnose[0] == _PHASE["trace"]:
                traced = diagnose[1].files[0]
    if kind == "performance":
        first, profile = _measure(files, bundle.toolchain)
        candidates.append((1, _PHASE["measure"], first))
        candidates.append((2, _PHASE["diagnose"], profile))
    for j, art in enumerate(sources[:MAX_CHANGE_ACTIONS]):
        candidates.append((2 + j * 3, _PHASE["change"] + j, _change(art, bundle, wording)))
    if not sources and not missing:
        if bundle.code_hits:
            step: Step = "diagnose" if kind in ("bug", "performance") else "locate"
            found = code_action(bundle, wording.code, wording.code_verify, step, traced=traced)
        else:
            found = locate_action(bundle)
        candidates.append((2, _PHASE["locate"], found))
        if kind != "question":
            candidates.append((4, _PHASE["change"], _change_found(found, wording)))
    if wording.test:
        if not tests:
            # The best tests of the whole ranking: those the real fix's tests changed in 97
            # of 140 reports, against 30 for the tests among the first ten files.
            ranked = bundle.code_tests or [h for h in bundle.code_hits if is_test_path(h.path)]
            tests = tuple(h.path for h in ranked)[:2]
        candidates.append((3, _PHASE["test"], _test(bundle, tests, wording)))
    for k, action in enumerate(_after(kind, files)):
        candidates.append((5 + k, 40 + k, action))
    chosen = sorted(candidates, key=lambda c: c[0])[:budget]
    middle = [action for _, _, action in sorted(chosen, key=lambda c: c[1])]
    last = _answer(bundle) if kind == "question" else checks_action(bundle)
    return (review_action(bundle), *middle, last)
