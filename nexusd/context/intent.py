"""What kind of work a request asks for: the plan's steps depend on it.

A bug is reproduced before it is fixed; a feature is specified by a test and built;
a refactor keeps behaviour and the tests green throughout; docs are written and
their examples run; a performance goal is measured before and after; a question
is answered with evidence, without changing code. Pure: words in, a kind out.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from nexusd.code.query import quotes_a_trace
from nexusd.context.goaltext import TOPIC_CHARS, split_goal

Kind = Literal["bug", "feature", "refactor", "docs", "performance", "question"]
KINDS: tuple[Kind, ...] = ("bug", "feature", "refactor", "docs", "performance", "question")
# Ties go to the more specific kind: what a goal is about beats the verb that starts it.
_TIE_ORDER: tuple[Kind, ...] = ("bug", "performance", "docs", "refactor", "question", "feature")

# (cue, weight): a cue is a word prefix or a phrase. Weights say how specific a cue is:
# "fix" or "add" start many goals of any kind; "traceback", "readme" or "p99" do not.
_CUES: dict[Kind, tuple[tuple[str, int], ...]] = {
    "bug": (
        ("fix", 1),
        ("bug", 3),
        ("crash", 3),
        ("error", 2),
        ("exception", 2),
        ("traceback", 3),
        ("fail", 2),
        ("failing", 1),  # cues of four letters are whole words: `fail` is not `failing`
        ("failed", 1),
        ("failure", 1),
        ("broken", 2),
        ("wrong", 2),
        ("incorrect", 2),
        ("regression", 3),
        ("race", 2),
        ("leak", 2),
        ("hang", 2),
        ("lost", 1),
        ("lose", 1),
        ("raise", 1),
        ("deadlock", 3),
        ("segfault", 3),
        ("doesn't work", 3),
        ("does not work", 3),
        ("not working", 3),
        ("unexpected", 1),
        ("off by", 3),
        ("no longer", 2),
        ("doesn't", 2),
        ("does not", 2),
        # Read as `does not` while a phrase's last word was a stem; said of a bug as often.
        ("does nothing", 2),
        ("cannot", 1),
        ("can't", 1),
        ("timeout", 2),
        ("times out", 2),
        ("instead of", 1),
        ("flaky", 1),
        ("flake", 1),
        ("flakiness", 1),
        ("hangs", 1),
        ("hanging", 1),
        ("leaks", 1),
        ("leaking", 1),
        # How reports say a result is wrong without "bug" or "error" (benchmarks/README.md,
        # twentieth session); words as often said of work to do (`issue`, `warning`, `stale`,
        # `incomplete`) are not among them.
        ("inconsisten", 1),
        ("inequivalent", 2),
        ("strange", 1),
        ("confusing", 1),
        ("has no attribute", 3),
        # The heading an issue template for bugs has and a feature's specification does not.
        ("actual behavio", 1),
        ("actual result", 1),
        ("actual output", 1),
        ("actual outcome", 1),
    ),
    "feature": (
        ("add", 1),
        ("implement", 2),
        ("support", 1),
        ("introduce", 2),
        ("new", 1),
        ("create", 1),
        ("allow", 1),
        ("enable", 1),
        ("feature", 3),
        ("ability", 2),
        ("expose", 1),
        ("extend", 1),
        ("option", 1),
        ("flag", 1),
    ),
    "refactor": (
        ("refactor", 4),
        ("clean up", 3),
        ("cleanup", 3),
        ("restructur", 3),
        ("rename", 2),
        ("extract", 2),
        ("split", 1),
        ("simplif", 2),
        ("reorganiz", 3),
        ("reorganis", 3),
        ("deduplicat", 3),
        ("decouple", 3),
        ("tidy", 2),
        ("consolidat", 2),
        ("rewrite", 2),
        ("without changing behavio", 4),
        ("dead code", 3),
        ("move", 1),
    ),
    "docs": (
        ("document", 3),
        ("docs", 3),
        ("readme", 3),
        ("docstring", 3),
        ("changelog", 3),
        ("tutorial", 3),
        ("user guide", 3),
        ("typo", 5),  # "Fix typos in error messages" is docs work
        ("typos", 5),
        ("comment", 1),
        ("usage example", 2),
    ),
    "performance": (
        ("slow", 3),
        ("slower", 3),
        ("slowdown", 3),
        ("faster", 3),
        ("speed", 2),
        ("performance", 3),
        ("latency", 3),
        ("throughput", 3),
        ("optimi", 3),
        ("memory usage", 3),
        ("cpu", 2),
        ("p99", 3),
        ("p50", 3),
        ("profil", 2),
        ("benchmark", 2),
        ("too long", 2),
        ("quicker", 2),
        ("startup time", 3),
    ),
    "question": (
        ("explain", 2),
        ("understand", 2),
        ("is it possible", 3),
        ("should we", 2),
        ("what is the best", 2),
        ("which is better", 3),
        ("find out", 2),
    ),
}
_ASKING = frozenset(
    """how why what which should could can is are does do where when""".split()  # noqa: SIM905
)
_QUESTION_WEIGHT = 4


@dataclass(frozen=True)
class Intent:
    """The kind of a request and the cues that decided it (empty: nothing said; a default)."""

    kind: Kind
    cues: tuple[str, ...] = ()


EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b")
# `from_file fails on TOML` reports a bug; `an option that fails on …` specifies a feature.
_FAILS = re.compile(r"(?<!\bthat )(?<!\bwhich )\bfails\b")


@functools.lru_cache(maxsize=256)
def _pattern(cue: str) -> re.Pattern[str]:
    words = cue.split()
    body = r"\s+".join(re.escape(w) for w in words)
    # Short words are whole words (`race` must not match `trace`, `new` not `renew`), the
    # last of a phrase too: `find out` is not the start of `find outliers`; it may take a
    # plural's `s`, though (`startup time` is said of `startup times`).
    plural = r"(?:e?s)?" if len(words) > 1 else ""
    tail = plural + r"\b" if len(words[-1]) <= 4 else ""
    return re.compile(r"\b" + body + tail)


# A request that says what happens beside what should happen reports a wrong result,
# whatever else it asks: `returns 500, should return 404`, `expected 3, got 4`. Verbs in
# the forms that describe what a program did (`returns`, `gave`), with the form that says
# what it should do; an imperative (`return 404 instead of 500`) is work to do.
_DID: dict[str, str] = {
    "return": "returns|returned",
    "give": "gives|gave|given",
    "print": "prints|printed",
    "show": "shows|showed|shown",
    "yield": "yields|yielded",
    "produce": "produces|produced",
    "output": "outputs|outputted",
    "raise": "raises|raised",
    "throw": "throws|threw",
    "evaluate": "evaluates|evaluated",
}
_CLAUSE = r"[^.;:!?\n]"  # within one clause
_SUBJECT = r"(?:(?:it|this|that|they|which)\s+)?"
_SHOULD = r"(?:should|must|ought\s+to|is\s+supposed\s+to|was\s+supposed\s+to)\s+(?:have\s+)?"
_BUT = r"(?:,\s*(?:but\s+)?|\bbut\s+|\bwhereas\s+|\bwhile\s+|\bwhen\s+)"
# Said of work to do, not of what happens: a verb in a purpose clause ("Add a switch so
# export prints CSV instead of JSON", "so that the output is …") or right after a relative
# `that` ("an endpoint that returns JSON, it should return 404 for …"). Read in the text of
# the clause before the verb, at most this far back.
_WANTED = re.compile(r"\bso\b|\bthat\s+$")
_CLAUSE_END = re.compile(r"[.;:!?\n,]")
_LOOK_BACK = 120
# (what it says, weight, pattern, whether a match in a clause of work to do is left out)
_MISMATCH: tuple[tuple[str, int, re.Pattern[str], bool], ...] = (
    (
        "returns X, should return Y",
        3,
        re.compile(
            "|".join(
                rf"\b(?:{did})\b{_CLAUSE}{{1,80}}?{_BUT}{_SUBJECT}{_SHOULD}(?:{base}|{did})\b"
                for base, did in _DID.items()
            )
        ),
        True,
    ),
    (
        # `is 10 but should be 12`; not `is a new page, it should be fast`, a spec, nor
        # `is fine, but it should be possible to …` or `… should be configurable`, a wish.
        # Weaker than a verb of a result: a cue of other work as strong as `document` or
        # `split` wins over it.
        "is X, should be Y",
        2,
        re.compile(
            rf"\b(?:is|are|was|were)\b{_CLAUSE}{{1,60}}?"
            rf"(?:,\s*|(?:\bbut|\bwhereas|\bwhen|\bwhile)\s+{_SUBJECT}){_SHOULD}(?:be|been)\b"
            r"(?!\s+(?:possible|able|allowed|configurable|optional)\b)"
        ),
        True,
    ),
    (
        "should return Y but returns X",
        3,
        re.compile(
            "|".join(
                rf"\b{_SHOULD}(?:{base})\b{_CLAUSE}{{1,80}}?\bbut\s+{_SUBJECT}(?:{did})\b"
                for base, did in {**_DID, "be|been": "is|are|was|were"}.items()
            )
        ),
        False,
    ),
    (
        "expected … got …",
        3,
        re.compile(
            # `see` only with its subject: "expected …, see RFC 9110" points elsewhere.
            rf"\bexpected\b{_CLAUSE}{{0,80}}?(?:,|\bbut\b|\binstead\b)\s*"
            r"(?:(?:(?:i|we|it|they)\s+)?(?:got|get|gets|received|returned|returns|saw)"
            r"|(?:i|we|they)\s+see)\b"
            # The labels of a report: `Expected: 3 items` / `Got: 2 items`.
            r"|\bexpected(?:\s+\w+)?\s*:[^.!?]{0,80}?\b(?:got|actual(?:\s+\w+)?)\s*:"
        ),
        False,
    ),
    (
        "returns X instead of Y",
        1,
        re.compile(
            # A little more than `instead of` alone, which also names work to do ("so the
            # CLI prints JSON instead of a table"): a feature's own cues still outweigh it.
            rf"\b(?:{'|'.join(_DID.values())}|is|are|was|were)\b"
            r"[^.;:!?,\n]{1,60}?\binstead\s+of\b"
        ),
        True,
    ),
)


def _said(pattern: re.Pattern[str], lower: str, guarded: bool) -> bool:
    """Whether `pattern` finds what happens in `lower`: with `guarded`, a match whose verb
    stands in a clause of work to do (see _WANTED) does not count."""
    at = 0
    while (match := pattern.search(lower, at)) is not None:
        if not guarded:
            return True
        before = lower[max(0, match.start() - _LOOK_BACK) : match.start()]
        ends = [m.end() for m in _CLAUSE_END.finditer(before)]
        if not _WANTED.search(before[ends[-1] if ends else 0 :]):
            return True
        at = match.start() + 1  # a later verb of the same clause may still say it
    return False


def classify_text(text: str) -> Intent:
    """The kind of work `text` (a goal) asks for; a feature when no cue is found."""
    prose = split_goal(text).prose
    lower = " ".join(prose).lower()
    first = re.findall(r"[a-z']+", lower[:40])[:1]
    scores: dict[Kind, int] = {}
    found: dict[Kind, list[str]] = {}
    for kind in KINDS:
        for cue, weight in _CUES[kind]:
            if _pattern(cue).search(lower):
                # The leading verb says most about the work ("Fix …", "Document …").
                bonus = 1 if _pattern(cue).match(lower) else 0
                scores[kind] = scores.get(kind, 0) + weight + bonus
                found.setdefault(kind, []).append(cue)
    for said, weight, pattern, guarded in _MISMATCH:
        if _said(pattern, lower, guarded):
            scores["bug"] = scores.get("bug", 0) + weight
            found.setdefault("bug", []).append(said)
    if _FAILS.search(lower):
        scores["bug"] = scores.get("bug", 0) + 1
        found.setdefault("bug", []).append("fails")
    if quotes_a_trace(text[:TOPIC_CHARS]):
        # A pasted traceback is a bug's mark whatever the prose asks ("I don't understand
        # why … find out": sympy-17630 quotes two), but not over a kind the prose says
        # outright ("slow", with a Ctrl-C traceback to show where the time goes).
        scores["bug"] = scores.get("bug", 0) + 2
        found.setdefault("bug", []).append("a quoted traceback")
    named = EXCEPTION_NAME.findall(" ".join(prose))
    other = any(scores.get(kind, 0) for kind in KINDS if kind != "bug")
    if named and not other:
        # `TypeError in send_file`: an exception class named in the goal is a bug's mark,
        # unless the goal says other work ("Add a ValidationError …", "docs for …").
        scores["bug"] = scores.get("bug", 0) + 3
        found.setdefault("bug", []).append(named[0])
    # A question mark asks only on its own: an issue's title above a report often ends in
    # one ("Symbol instances have __dict__ since 1.7?") and reports a bug all the same.
    alone = len(prose) == 1 and prose[0].rstrip().endswith("?")
    asks = alone or (first and first[0] in _ASKING)
    if asks:
        scores["question"] = scores.get("question", 0) + _QUESTION_WEIGHT
        found.setdefault("question", []).append("?" if not first else first[0])
    if not scores:
        return Intent("feature")
    best = max(_TIE_ORDER, key=lambda k: (scores.get(k, 0), -_TIE_ORDER.index(k)))
    return Intent(best, tuple(found[best]))
