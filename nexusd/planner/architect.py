"""Phase 3, the architect: the offline planner turns the context bundle into response sections.

Deterministic: the same bundle gives the same text. No network, no model.
"""

from __future__ import annotations

import shlex

from nexusd.code.js_statements import is_test_block
from nexusd.code.places import is_test_path
from nexusd.context.artifacts import Hit, find_mentions
from nexusd.context.catalog import Match, match_practices
from nexusd.context.goaltext import goal_summary, goal_title
from nexusd.context.intent import Kind
from nexusd.context.keywords import keywords
from nexusd.context.librarian import ContextBundle
from nexusd.context.toolchain import Toolchain, fill
from nexusd.context.toolsfile import Tool
from nexusd.planner.actions import (
    Action,
    check_commands,
    code,
    has_previous_cycle,
    render_actions,
    short,
)
from nexusd.planner.sequence import plan_actions
from nexusd.protocol.documents import STANDARD_SECTIONS, Section
from nexusd.protocol.inline import inline_code

PLANNER_NAME = "offline"
OFFLINE_NOTE = (
    "_Written by nexusd's **offline planner**: deterministic, no network, no model. "
    "Every statement below comes from facts it gathered in this repository; "
    "where judgement is needed it says what to measure instead of guessing._"
)
MAX_DIRTY_SHOWN = 10
# What each kind of plan does after its first step, and why (`justification`).
_THEN: dict[Kind, str] = {
    "bug": "reproduces the bug{blockers} with a failing test before changing code, since a fix "
    "without a reproduction cannot be verified, and ends with the checks so the next cycle "
    "starts from a measured state.",
    "feature": "finds where the new behaviour belongs, specifies it with a test before "
    "building it, documents it, and ends with the checks.",
    "refactor": "pins today's behaviour with tests that pass before any change, restructures "
    "in small steps that keep them green, and ends with the checks.",
    "docs": "reads the code the text describes so it matches what the code does, runs every "
    "example the text shows, and ends with the checks.",
    "performance": "measures a baseline and profiles before optimising (a gain that is not "
    "measured is a guess), re-measures after, and ends with the checks.",
    "question": "reads the code the question is about and answers with cited lines; it "
    "changes no code.",
}


def justification(bundle: ContextBundle) -> str:
    """Why the plan's steps come in their order, for its kind of work and what it starts from."""
    req = bundle.request
    if has_previous_cycle(bundle):
        first = "The plan starts by reviewing the previous cycle so unfinished work is not lost"
    else:
        first = "With no previous cycle found, the plan starts from the working tree as it is"
    blockers = " and each blocker" if req.blockers else ""
    return f"{first}, {_THEN[bundle.intent.kind].format(blockers=blockers)}"


def title_for(bundle: ContextBundle) -> str:
    """`Plan for cycle 3: <goal>` (or `Plan: <goal>` without a cycle), markdown marks removed."""
    goal = goal_title(bundle.request.goal, 100)
    n = bundle.request.cycle
    return f"Plan for cycle {n}: {goal}" if n is not None else f"Plan: {goal}"


def _hits(hits: tuple[Hit, ...], indent: str = "") -> list[str]:
    return [
        f"{indent}- {inline_code(f'{h.path}:{h.line}')} — {inline_code(short(h.text, 100))} "
        f"(mentions {', '.join(h.matched)})"
        for h in hits
    ]


def _git_lines(bundle: ContextBundle) -> list[str]:
    git = bundle.git
    if git.error:
        return [f"- Git facts unavailable: {git.error}"]
    where = f"branch {inline_code(git.branch)}" if git.branch else "a **detached HEAD**"
    head = f"`{git.head[:10]}` “{short(git.head_subject, 70)}”" if git.head else "no commit yet"
    lines = [f"- Repository: {where}, HEAD {head}."]
    if git.dirty_total:
        shown = [
            f"`{d.code.strip() or d.code}` {inline_code(d.path)}"
            for d in git.dirty[:MAX_DIRTY_SHOWN]
        ]
        more = f" (and {git.dirty_total - len(shown)} more)" if git.dirty_total > len(shown) else ""
        lines.append(
            f"- Uncommitted changes (nexusd's own files aside): {git.dirty_total}: "
            f"{'; '.join(shown)}{more}."
        )
    else:
        lines.append("- The working tree is clean (nexusd's own files aside).")
    return lines


def _artifact_table(bundle: ContextBundle) -> list[str]:
    if not bundle.artifacts:
        return ["- No relevant artifacts were named in the request."]
    rows = [
        "| artifact | status | size | lines | top-level symbols | last commit |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for art in bundle.artifacts:
        symbols = ", ".join(f"{s.name}" for s in art.symbols[:6]) or "—"
        if len(art.symbols) > 6:
            symbols += f" (+{len(art.symbols) - 6})"
        commits = bundle.git.recent.get(art.rel or "", ())
        last = f"`{commits[0].sha}` {short(commits[0].subject, 40)}" if commits else "—"
        # A refusal's note already says `refused: …`; the cell says it once.
        note = art.note.removeprefix(f"{art.status}: ")
        status = art.status if not note else f"{art.status}: {short(note, 60)}"
        size = f"{art.size} B" if art.status == "ok" else "—"
        lines = str(art.lines) if art.status == "ok" else "—"
        name = inline_code(art.path) + (
            f" ({short(art.description, 60)})" if art.description else ""
        )
        cells = (name, status, size, lines, symbols, last)
        # A `|` inside a cell (a commit subject, a description) would split the row.
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return rows


def _answer(question: str, bundle: ContextBundle) -> list[str]:
    """What the facts say about an executor question, without pretending to reason."""
    words = keywords(question)
    hits = find_mentions(bundle.artifacts, words, limit=4)
    matches = match_practices(bundle.catalog, question, limit=2, minimum=0)
    chain = bundle.toolchain
    out = [f"You asked: “{short(question, 300)}”", ""]
    if hits:
        out.append("What the artifacts say about it:")
        out.extend(_hits(hits))
    else:
        out.append(f"No relevant artifact mentions {', '.join(words[:6]) or 'its words'}.")
    for m in matches:
        out.append(f"- Catalog, *{m.practice.title}*: {fill(m.practice.practice, chain)}")
        if m.practice.diagnostic:
            files = code(sorted({h.path for h in hits})) or "the affected code"
            diagnostic = fill(m.practice.diagnostic, chain).replace("{files}", files)
            out.append(f"- Measure to decide: {diagnostic}")
    return out


def analysis(bundle: ContextBundle) -> str:
    """Facts-based analysis and justification; answers the executor's analysis question."""
    req = bundle.request
    intent = bundle.intent
    cues = f" (said by: {', '.join(intent.cues[:4])})" if intent.cues else " (no cue; the default)"
    lines = [OFFLINE_NOTE, "", f"**Goal:** {goal_summary(req.goal)}", ""]
    lines.append(f"- Kind of work: **{intent.kind}**{cues}; the plan's steps fit it.")
    if req.time_box:
        lines.append(f"- Time box: {req.time_box}.")
    lines.extend(_git_lines(bundle))
    prev = bundle.previous
    if prev is not None:
        lines.append(
            f"- Previous cycle: {inline_code(prev.path)} ({prev.source}; "
            f"planner {prev.planner or 'unknown'}, "
            f"status {prev.status or 'unknown'}) planned {len(prev.actions)} action(s)."
        )
        lines += [f"  {i}. {short(a, 110)}" for i, a in enumerate(prev.actions[:8], start=1)]
        if prev.checklist:
            ticked = sum(1 for done, _ in prev.checklist if done)
            lines.append(f"  Its follow-up checklist: {ticked} of {len(prev.checklist)} ticked.")
        if prev.note:
            lines.append(f"  Note: {prev.note}.")
    if req.previous_outcome:
        lines.append(
            f"- Reported outcome of the previous cycle: {short(req.previous_outcome, 300)}"
        )
    if req.blockers:
        lines.append(f"- Blockers reported: {len(req.blockers)}.")
    lines += ["", *_artifact_table(bundle)]
    if bundle.goal_evidence:
        lines += ["", "Lines of the artifacts that mention the goal's words:"]
        lines += _hits(bundle.goal_evidence)
    if bundle.warnings:
        lines += ["", "Warnings:"] + [f"- {w}" for w in bundle.warnings]
    if req.questions.analysis:
        lines += ["", *_answer(req.questions.analysis, bundle)]
    lines += ["", f"**Justification.** {justification(bundle)}"]
    return "\n".join(lines)


def plan_section(actions: tuple[Action, ...], bundle: ContextBundle) -> str:
    """The numbered plan, plus the answer to a plan question."""
    body = render_actions(actions)
    if bundle.request.questions.plan:
        body += f"\n\nYou asked about the plan: “{short(bundle.request.questions.plan, 300)}”. "
        body += "The actions above are ordered so each one can be verified before the next."
    return body


def blocker_solutions(bundle: ContextBundle) -> str:
    """For each blocker: the evidence found and a concrete next diagnostic step."""
    if not bundle.blockers:
        out = [
            "No blockers were reported. If something stops you, list it under `blockers` in "
            "the next request: it will be searched for in the artifacts."
        ]
    else:
        out = []
    for i, blocker in enumerate(bundle.blockers, start=1):
        out += [f"### {i}. {short(blocker.text, 120)}", ""]
        out.append(f"- Searched the artifacts for: {', '.join(blocker.words) or '(no words)'}.")
        if blocker.evidence:
            out.append("- Evidence:")
            out += _hits(blocker.evidence, indent="  ")
        else:
            out.append(
                "- Evidence: no relevant artifact mentions these words; the cause is "
                "likely outside the named files, so widen the search with `git grep`."
            )
        where = tuple(dict.fromkeys(h.path for h in blocker.evidence))
        diagnostic = next(
            (m.practice.diagnostic for m in blocker.practices if m.practice.diagnostic), ""
        )
        diagnostic = fill(diagnostic, bundle.toolchain)
        step = diagnostic.replace("{files}", code(where) or "the affected code") or (
            "Write the smallest command or test that shows the blocker, run it three times, "
            f"and bisect with `git bisect run` if it used to work{_in(where)}."
        )
        out.append(f"- Next diagnostic step: {step}")
        for m in blocker.practices:
            out.append(f"- Related practice: *{m.practice.title}*.")
        out.append("")
    if bundle.request.questions.blocker_solutions:
        out += ["", *_answer(bundle.request.questions.blocker_solutions, bundle)]
    return "\n".join(out).strip()


def _in(where: tuple[str, ...]) -> str:
    return f" (start with {code(where)})" if where else ""


def best_practices(bundle: ContextBundle) -> str:
    """Catalog entries matched by the goal and blockers, with the words that matched."""
    out = [_practice_line(m, bundle.toolchain) for m in bundle.practices]
    if bundle.request.questions.best_practices:
        out += ["", *_answer(bundle.request.questions.best_practices, bundle)]
    return "\n".join(out)


def _practice_line(m: Match, chain: Toolchain) -> str:
    why = f" _(matched: {', '.join(m.matched)})_" if m.matched else " _(general practice)_"
    return f"- **{m.practice.title}.** {fill(m.practice.practice, chain)}{why}"


def _rank_tools(tools: tuple[Tool, ...], words: tuple[str, ...]) -> list[tuple[int, Tool]]:
    scored = []
    for order, tool in enumerate(tools):
        text = f"{tool.name} {tool.description}".lower().replace("_", " ")
        score = sum(1 for w in words if w in text)
        scored.append((-score, order, tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(-s, t) for s, _, t in scored]


def tool_calls(bundle: ContextBundle) -> str:
    """Tools from the request's tools file when it exists, else generic git/pytest/nexusd."""
    facts = bundle.tools
    words = tuple(
        dict.fromkeys(bundle.goal_words + tuple(w for b in bundle.blockers for w in b.words))
    )
    out: list[str] = []
    if facts.exists and facts.tools:
        # A file that exists was named by the request: `path` is set.
        named = inline_code(facts.path or "")
        out.append(f"From {named} ({len(facts.tools)} tools), most relevant first:")
        for score, tool in _rank_tools(facts.tools, words)[:8]:
            why = f" — {tool.description}" if tool.description else ""
            rel = f" _(shares {score} word(s) with the goal and blockers)_" if score else ""
            out.append(f"- {inline_code(tool.name)}{why}{rel}")
        return _with_question(out, bundle)
    if facts.path:
        out.append(f"The tools file {inline_code(facts.path)} {facts.note}; generic tools instead:")
    arts = [a.rel for a in bundle.artifacts if a.rel and a.status == "ok"]
    scope = " -- " + " ".join(shlex.quote(a) for a in arts[:4]) if arts else ""
    n = bundle.request.cycle
    out += [
        f"- {inline_code(f'git log --oneline -n 5{scope}')}: what changed recently"
        + (" in the artifacts." if arts else "."),
        _search_tool(bundle),
        f'- `nexusd checkpoint create -m "before cycle {n if n is not None else "next"}"`: '
        "a snapshot you can restore if the cycle goes wrong.",
        f"- {inline_code(bundle.toolchain.first_failure)}: stop at the first failure while "
        "iterating.",
        "- `nexusd check`: the configured checks, as the daemon runs them."
        if bundle.checks
        else "- `nexusd check`: none is configured yet; add them under `checks:` in "
        "`.nexus/config.yaml` and the daemon runs them on a snapshot.",
    ]
    return _with_question(out, bundle)


def _search_tool(bundle: ContextBundle) -> str:
    """Who calls the code the index ranks first (`nexusd code impact`), else a `git grep`
    of the goal's words, which matches them in every comment and string too."""
    # Nobody calls a test, nor a test block in a file its path does not call a test
    # (`cypress/e2e/checkout.cy.js`): `it("applies the coupon")` has no callers to show.
    units = [
        (h.path, u)
        for h in bundle.code_hits
        if not is_test_path(h.path)
        for u in h.units
        if not is_test_block(u.qualname.rsplit(".", 1)[-1])
    ]
    if units:
        path, unit = units[0]
        name = unit.qualname.split(".")[-1]
        impact = f"nexusd code impact {shlex.quote(f'{path}:{unit.qualname}')}"
        return (
            f"- {inline_code(impact)}: who calls {inline_code(name)}, and what it calls, "
            "before you change it."
        )
    grep = " ".join(f"-e {w}" for w in bundle.goal_words[:3]) or "-e <word>"
    return f"- `git grep -n -i {grep}`: where the goal's words occur."


def _with_question(out: list[str], bundle: ContextBundle) -> str:
    if bundle.request.questions.tools:
        out += [
            "",
            f"You asked: “{short(bundle.request.questions.tools, 300)}”. "
            "The list above is ranked by the words it shares with your goal and blockers.",
        ]
    return "\n".join(out)


def checklist(bundle: ContextBundle, actions: tuple[Action, ...]) -> str:
    """What the executor does at the end of this cycle, ending with the next request."""
    n = bundle.request.cycle
    nxt = f"cycle {n + 1}" if n is not None else "next cycle's"
    return "\n".join(
        [
            f"- [ ] Mark each of the {len(actions)} plan actions done or not done, with evidence.",
            "- [ ] Run the checks and keep their result: "
            + "; ".join(check_commands(bundle))
            + ".",
            "- [ ] Note one lesson or decision in `MEMORY.md` (Lessons / Decisions) if you learned "
            "something the next cycle must not forget.",
            "- [ ] Commit the work with a message that names the goal.",
            f"- [ ] Write the {nxt} request with `history_path: {bundle.response_rel}`, "
            f"`previous_goal` = this goal and `previous_outcome` = what actually happened.",
            "- [ ] List what still blocks you under `blockers`, and the files that matter under "
            "`artifacts`.",
        ]
    )


def standard_sections(bundle: ContextBundle, max_actions: int) -> tuple[Section, ...]:
    """The six Template A sections, in STANDARD_SECTIONS order."""
    actions = plan_actions(bundle, max_actions)
    bodies = (
        analysis(bundle),
        plan_section(actions, bundle),
        blocker_solutions(bundle),
        best_practices(bundle),
        tool_calls(bundle),
        checklist(bundle, actions),
    )
    return tuple(Section(t, b) for t, b in zip(STANDARD_SECTIONS, bodies, strict=True))
