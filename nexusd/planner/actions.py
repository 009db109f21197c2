"""Plan actions: the value, its rendering, and the steps every kind of request shares.

`nexusd.planner.sequence` chooses and orders them for the kind of request.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

from nexusd.code.places import is_test_path
from nexusd.context.goaltext import goal_title
from nexusd.context.librarian import BlockerFacts, ContextBundle
from nexusd.context.toolchain import Toolchain, fill
from nexusd.protocol.inline import inline_code, inline_codes

# What an action does, so plans (and tests) can reason about steps, not their wording.
Step = Literal[
    "review",
    "reproduce",
    "create",
    "locate",
    "diagnose",
    "test",
    "measure",
    "change",
    "document",
    "answer",
    "checks",
]


@dataclass(frozen=True)
class Action:
    """One atomic action: what to do, on which files, and how to know it is done."""

    title: str
    files: tuple[str, ...]
    how: str
    verify: str
    step: Step = "change"


def short(text: str, limit: int = 90) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def code(items: tuple[str, ...] | list[str]) -> str:
    """`a`, `b` and `c` as inline code, comma-separated."""
    return inline_codes(items)


def check_commands(bundle: ContextBundle) -> list[str]:
    """The commands that verify the work: configured checks, else a sensible default."""
    commands = [f"{c['name']}: {inline_code(c['run'])}" for c in bundle.checks]
    if commands:
        return [*commands, "all of them at once: `nexusd check`"]
    chain = bundle.toolchain
    tests = [a.rel for a in bundle.artifacts if a.rel and is_test_path(a.rel)]
    target = " ".join(shlex.quote(t) for t in tests if t) if chain.language == "python" else ""
    return [inline_code(f"{chain.test} {target}" if target else chain.test)]


def has_previous_cycle(bundle: ContextBundle) -> bool:
    """Whether the request follows a cycle: its response was found, or the request gives
    the previous goal or outcome."""
    req = bundle.request
    return bundle.previous is not None or bool(req.previous_goal or req.previous_outcome)


def review_action(bundle: ContextBundle) -> Action:
    """Review the previous cycle (or the starting point) before anything else."""
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
            "review",
        )
    if has_previous_cycle(bundle):
        return Action(
            f"Review {label}: goal “{short(req.previous_goal or 'not stated', 70)}”",
            (),
            f"Outcome reported: “{short(req.previous_outcome or 'not stated', 140)}”. "
            "No previous response file was found, so confirm the outcome from `git log` and "
            "the test results.",
            "the outcome is confirmed by a commit or a test run you can name",
            "review",
        )
    git = bundle.git
    where = f"branch {inline_code(git.branch)}" if git.branch else "a detached HEAD"
    head = f" at `{git.head[:10]}` (“{short(git.head_subject, 60)}”)" if git.head else ""
    if git.dirty_total:
        state = (
            f"with {git.dirty_total} uncommitted change(s) (nexusd's own files not counted). "
            "Confirm they belong to this goal, or commit or stash them first."
        )
    else:
        state = "with no uncommitted changes (nexusd's own files not counted)."
    return Action(
        "Review the starting point (no previous cycle found)",
        (),
        f"You are on {where}{head} {state}",
        "`git status --short` shows only changes meant for this cycle",
        "review",
    )


def blocker_action(
    index: int, blocker: BlockerFacts, files: tuple[str, ...], chain: Toolchain
) -> Action:
    """Reproduce one reported blocker before anything else touches it."""
    where = tuple(dict.fromkeys(h.path for h in blocker.evidence)) or files
    diagnostic = next(
        (fill(m.practice.diagnostic, chain) for m in blocker.practices if m.practice.diagnostic),
        "",
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
        "reproduce",
    )


def create_action(missing: tuple[str, ...]) -> Action:
    """Create the artifacts the request names that do not exist yet."""
    return Action(
        f"Create the missing artifact(s) {code(list(missing))}",
        missing,
        "They are listed as relevant but do not exist yet; create them with the smallest "
        "content that the next action builds on.",
        "the files exist and are imported or run by a test",
        "create",
    )


def gone_action(gone: tuple[str, ...], bundle: ContextBundle) -> Action:
    """Artifacts the request names that existed once (git has their history): they were
    deleted or moved, not yet to be written; say where each went and how to get it back."""
    # Deleted (staged or not) or moved away (`git mv`) since the last commit.
    dirty = bundle.git.dirty
    deleted_here = {d.path for d in dirty if "D" in d.code} | {d.origin for d in dirty}
    told: list[str] = []
    for path in gone:
        if path in deleted_here:
            restore = f"git restore --source=HEAD --staged --worktree -- {shlex.quote(path)}"
            told.append(
                f"{inline_code(path)} was deleted or moved since the last commit (`git status` "
                f"says which; {inline_code(restore)} brings it back)"
            )
            continue
        last = bundle.git.recent[path][0]
        back = f"git checkout {last.sha}~1 -- {shlex.quote(path)}"
        told.append(
            f"{inline_code(path)} was last changed in `{last.sha}` (“{short(last.subject, 60)}”), "
            f"which removed or moved it (`git show --stat {last.sha}` says which; "
            f"{inline_code(back)} brings it back)"
        )
    return Action(
        f"Find out where {code(list(gone))} went",
        gone,
        "Named as relevant, but no longer in the working tree: " + "; ".join(told) + ". "
        "If it moved, work on its new path; if it was removed on purpose, the request may "
        "be out of date.",
        "you can name the file that now holds this code, or why it is gone",
        "locate",
    )


def locate_action(bundle: ContextBundle) -> Action:
    """Without artifacts or code-index hits: find the files by the goal's words."""
    git = bundle.git
    if git.head is None and not git.dirty_total and git.error is None:
        # `git grep` in a repository with nothing in it would only ever come back empty.
        empty = "The repository has no commit and no files yet (nexusd's own aside): there is "
        if bundle.intent.kind == "question":
            return Action(
                "Note that there is no code to read yet",
                (),
                empty + "no code the answer could cite. Answer from the request alone, and say so.",
                "the answer says it rests on no code of this repository",
                "locate",
            )
        return Action(
            "Decide which files the goal needs",
            (),
            empty + "no code to search. Choose the files this goal needs and create the "
            "smallest one first, where its test can import it.",
            "the files are named, and the first exists",
            "locate",
        )
    words = bundle.goal_words[:4]
    grep = " ".join(f"-e {w}" for w in words) if words else "-e <word of the goal>"
    return Action(
        "Locate the code the goal is about",
        (),
        f"No relevant artifact was given or found; search with `git grep -n -i {grep}` and "
        "list the files that matter.",
        "a list of files, added as `artifacts` to the next request",
        "locate",
    )


def code_action(
    bundle: ContextBundle, title: str, verify: str, step: Step, *, traced: str | None = None
) -> Action:
    """Start where the code index points: the top file and its best units, by name; or,
    where the request's traceback ends in a ranked file (`traced`), that file."""
    sources = [h for h in bundle.code_hits if not is_test_path(h.path)] or list(bundle.code_hits)
    first = [h for h in bundle.code_hits if h.path == traced]
    if first:
        sources = [*first, *(h for h in sources if h.path != traced)]
    top = sources[0]
    units = ", ".join(f"{inline_code(u.qualname)} (line {u.start})" for u in top.units[:3])
    why = "; ".join(top.reasons[:2]) or "it shares the request's rarest words"
    others = code([h.path for h in sources[1:3]])
    then = f" If it is not there, look next at {others}." if others else ""
    start = f"Read {units} first: " if units else ""
    ranked = (
        "the request's traceback ends in this file"
        if first
        else "the code index ranks this file first"
    )
    return Action(
        title.format(file=inline_code(top.path)),
        tuple(h.path for h in sources[:3]),
        f"{start}{ranked} because {why}.{then}",
        verify,
        step,
    )


def goal_line(bundle: ContextBundle, limit: int = 100) -> str:
    """The goal in one clean line, for the text of an action."""
    return goal_title(bundle.request.goal, limit)


def checks_action(bundle: ContextBundle) -> Action:
    """The configured checks (or a sensible default), last in every plan that changes code."""
    unset = (
        "" if bundle.checks else "No checks are configured (`checks:` in `.nexus/config.yaml`): "
    )
    return Action(
        "Run the checks",
        (),
        unset + "Run " + "; ".join(check_commands(bundle)) + ".",
        "every check passes; the results go into the next request's previous outcome",
        "checks",
    )


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
