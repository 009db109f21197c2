"""Rank files and their units for a request: the evidence's signals, weighed, and the graph.

Each signal (`evidence.signals`: lexical, definitions, paths, frames, messages) gives every
file a score in [0, 1]; the ranking is their weighted sum, spread a little along imports
and from tests to the code they test. Every hit keeps the reasons that put it there,
strongest first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nexusd.code.corpus import Corpus
from nexusd.code.evidence import Signals, above_all, signals
from nexusd.code.lexical import Floats
from nexusd.code.places import is_test_module
from nexusd.code.query import CodeQuery
from nexusd.code.title import order_by_title
from nexusd.code.units import CodeUnit
from nexusd.code.weights import Weights
from nexusd.protocol.inline import inline_code

# The tests a search names beside its files: the plan's test step names two, the second at
# half the first's score or more (on 140 reports: 10 fewer named, none of them right).
TESTS_NAMED = 2
SECOND_TEST_SHARE = 0.5
# A file reached along an import or from its test says so where that edge gave this share
# of its score or more.
EDGE_SHARE = 0.25
# Units a run enters: a function's first line is its code object's `co_firstlineno`.
_RUNNABLE = frozenset({"function", "method"})


@dataclass(frozen=True)
class UnitHit:
    """A unit inside a ranked file."""

    qualname: str
    kind: str
    start: int
    end: int
    signature: str
    score: float
    reasons: tuple[str, ...]
    ran: bool = False  # the request's code entered it when run in the sandbox


@dataclass(frozen=True)
class FileHit:
    """A ranked file, its best units and why it ranks."""

    path: str
    score: float
    reasons: tuple[str, ...]
    units: tuple[UnitHit, ...] = ()


@dataclass(frozen=True)
class Ranking:
    """The best files, and the best tests of the whole ranking: a plan's test step's (low among
    the files, but the tests the real fix's changed in 97 of 140 reports)."""

    files: tuple[FileHit, ...] = ()
    tests: tuple[FileHit, ...] = ()


@dataclass(frozen=True)
class _Told:
    """The query's most telling terms for each index, computed once per query."""

    files: list[str]
    units: list[str]
    prose: list[str]


def _ran(unit: CodeUnit, ran: AbstractSet[int] | None) -> bool:
    """Whether the request's code entered this function or method (`ran`: first lines)."""
    return ran is not None and unit.kind in _RUNNABLE and unit.start in ran


def _entered(
    ran: AbstractSet[int] | None, looped: AbstractSet[int] | None
) -> AbstractSet[int] | None:
    """The first lines of a file's functions the request's code entered: those a recursion
    went round ran too, though the profile may not have seen them (a RecursionError caught
    earlier in the statement drops the tracer's profile hook; the prelude runs untraced)."""
    if not looped:
        return ran
    return frozenset(ran or ()) | frozenset(looped)


def _strongest_first(
    found: Sequence[tuple[str, float, str]], sig: Signals, f: int, weights: Weights
) -> list[str]:
    """The reasons' texts, once each: the signal that counted most for the file first, the
    strongest piece of evidence first within a signal (not the order they were found in)."""

    def counted(reason: tuple[str, float, str]) -> tuple[float, float]:
        name, strength, _text = reason
        values = sig.scores.get(name)
        share = float(values[f]) if values is not None else 0.0
        return getattr(weights, name, 0.0) * share, strength

    return list(dict.fromkeys(text for *_, text in sorted(found, key=counted, reverse=True)))


def rank(
    corpus: Corpus,
    query: CodeQuery,
    k: int = 10,
    weights: Weights | None = None,
    *,
    extra: Mapping[str, Floats] | None = None,
    why: Mapping[str, Mapping[int, str]] | None = None,
    ran_lines: Mapping[str, AbstractSet[int]] | None = None,
    recursion: Mapping[str, Sequence[tuple[int, str]]] | None = None,
) -> list[FileHit]:
    """The `k` files most likely to be what the request is about, best first (`ranking`)."""
    found = ranking(
        corpus, query, k, weights, extra=extra, why=why, ran_lines=ran_lines, recursion=recursion
    )
    return list(found.files)


def ranking(
    corpus: Corpus,
    query: CodeQuery,
    k: int = 10,
    weights: Weights | None = None,
    *,
    tests: int = 0,
    extra: Mapping[str, Floats] | None = None,
    why: Mapping[str, Mapping[int, str]] | None = None,
    ran_lines: Mapping[str, AbstractSet[int]] | None = None,
    recursion: Mapping[str, Sequence[tuple[int, str]]] | None = None,
) -> Ranking:
    """The `k` files most likely to be what the request is about, best first, and the best
    `tests` test files of the whole ranking.

    `extra` adds signals computed elsewhere (one score per file of `corpus.paths`, named
    like a `Weights` field), each divided by its best like the index's own; `why` gives
    files their reason for one of them (signal → file index → text); `ran_lines` gives, per
    path, the first lines of the functions the request's code entered, which list first among
    their file's; `recursion`, per path, (first line, name) of those a recursion it ran into
    went round, listed above all.
    """
    n = len(corpus.paths)
    if n == 0 or query.is_empty():
        return Ranking()
    sig, unit_scores = signals(corpus, query)
    for name, values in (extra or {}).items():
        sig.add(name, np.clip(np.asarray(values, dtype=float), 0.0, None))
    for name, texts in (why or {}).items():
        for f, text in texts.items():
            sig.reasons[f].append((name, 1.0, text))
    looped = {path: {line for line, _ in pairs} for path, pairs in (recursion or {}).items()}
    _looped_units(corpus, sig, unit_scores, looped)
    weights = weights or Weights()
    total = combine(corpus, sig, weights)
    order = np.argsort(-total, kind="stable")
    # The file the title put first says so first: that is what decided its place.
    moved = order_by_title(corpus, query.title_terms, total, weights.title_order, order)
    if moved is not None:
        order[0], order[1] = order[1], order[0]
    best_tests = _best_tests(corpus, total, order, tests)
    terms = dict(query.terms)
    told = _Told(
        corpus.file_bm25.telling(terms),
        corpus.unit_bm25.telling(terms),
        corpus.prose_bm25.telling(terms),
    )

    def hit(f: int) -> FileHit:
        return _file_hit(
            corpus,
            f,
            float(total[f]),
            sig,
            unit_scores=unit_scores,
            told=told,
            weights=weights,
            ran=_entered((ran_lines or {}).get(corpus.paths[f]), looped.get(corpus.paths[f])),
            lead=moved[1] if moved is not None and moved[0] == f else None,
        )

    files = tuple(hit(int(f)) for f in order[:k] if total[f] > 0)
    return Ranking(files, tuple(hit(f) for f in best_tests))


def _best_tests(corpus: Corpus, total: Floats, order: npt.NDArray[np.intp], n: int) -> list[int]:
    """The best `n` test modules by score, best first; each after the first only at
    SECOND_TEST_SHARE of its score or more (a word such as `test` alone scores every test)."""
    best: list[int] = []
    if n <= 0:
        return best
    for f in order[corpus.test_mask[order] & (total[order] > 0)]:
        if len(best) == n or (best and total[f] < SECOND_TEST_SHARE * total[best[0]]):
            break
        if is_test_module(corpus.paths[int(f)]):
            best.append(int(f))
    return best


def executed_signal(
    corpus: Corpus,
    ran: Mapping[str, Sequence[str]],
    recursion: Mapping[str, Sequence[tuple[int, str]]] | None = None,
) -> tuple[dict[str, Floats], dict[str, dict[int, str]]]:
    """`rank`'s extra signals and reasons for the files a request's code entered when run,
    and for those whose functions a recursion it ran into went round (`recursion`: per path,
    the functions' first lines and names)."""
    extra: dict[str, Floats] = {}
    reasons: dict[str, dict[int, str]] = {}
    for name, found, said in (
        ("executed", ran, "ran when the request's code was run"),
        (
            "recursion",
            {p: [n for _, n in pairs] for p, pairs in (recursion or {}).items()},
            "went round in the recursion the request's code ran into",
        ),
    ):
        values = np.zeros(len(corpus.paths))
        why: dict[int, str] = {}
        for path, names in found.items():
            f = corpus.index.get(path)
            if f is None:
                continue
            values[f] = 1.0
            shown = ", ".join(inline_code(n) for n in list(dict.fromkeys(names))[:3])
            why[f] = said + (f" ({shown})" if shown else "")
        if why:
            extra[name], reasons[name] = values, why
    return extra, reasons


def _looped_units(
    corpus: Corpus, sig: Signals, unit_scores: Floats, looped: Mapping[str, AbstractSet[int]]
) -> None:
    """The functions a recursion went round are listed first among their file's units."""
    if not looped:
        return
    top = above_all(sig, unit_scores)
    for path, starts in looped.items():
        f = corpus.index.get(path)
        for e in corpus.file_entries[f] if f is not None else ():
            if _ran(corpus.entries[e].unit, starts):
                sig.unit_bonus[e] += top


def combine(corpus: Corpus, sig: Signals, w: Weights) -> Floats:
    """The weighted sum of the signals, spread from tests and along imports."""
    n = len(corpus.paths)
    total = np.zeros(n)
    for name, values in sig.scores.items():
        total += getattr(w, name) * values
    tests = corpus.test_mask
    spread = np.zeros(n)
    # Per file, the edge its spread came by: a hit found only so still says why it is there.
    edges: dict[str, dict[int, tuple[str, int]]] = {"test_spread": {}, "graph": {}}
    for f in np.flatnonzero(tests & (total > 0)):
        for t, share in corpus.tested_by(int(f)):
            if w.test_spread * share * total[f] > spread[t]:
                spread[t] = w.test_spread * share * total[f]
                edges["test_spread"][t] = ("tested by", int(f))
    graph = np.zeros(n)
    for f in np.argsort(-total)[:20]:
        imports = corpus.imports[f]
        for t in imports | corpus.importers[f]:
            # A module everything imports says nothing about this request.
            value = total[f] / math.sqrt(1.0 + len(corpus.importers[t]))
            if value > graph[t]:
                graph[t] = value
                edges["graph"][t] = ("imported by" if t in imports else "imports", int(f))
    spreads = {"test_spread": spread, "graph": w.graph * graph}
    total = total + spread + w.graph * graph
    said: dict[int, int] = {}
    for name, values in spreads.items():
        for t, (how, source) in edges[name].items():
            # Said where the edge is a good part of the file's score, not for every neighbour;
            # a test that also imports the file is named once, as its test.
            if values[t] >= EDGE_SHARE * total[t] > 0 and said.get(t) != source:
                said_path = inline_code(corpus.paths[source])  # a name may hold a backtick
                sig.reasons[t].append((name, float(values[t]), f"{how} {said_path}"))
                said[t] = source
    total[tests] *= w.test_factor
    prose = np.array(corpus.prose, dtype=bool)
    total[prose] *= w.text_factor
    total[np.array(corpus.auxiliary, dtype=bool) & ~prose] *= w.auxiliary_factor
    total[np.array(corpus.minority, dtype=bool)] *= w.minority_factor
    return total


def _file_hit(
    corpus: Corpus,
    f: int,
    score: float,
    sig: Signals,
    *,
    unit_scores: Floats,
    told: _Told,
    weights: Weights,
    ran: AbstractSet[int] | None = None,
    lead: str | None = None,
) -> FileHit:
    reasons = _strongest_first(sig.reasons.get(f, []), sig, f, weights)
    if lead is not None:
        reasons.insert(0, lead)
    if corpus.prose[f]:
        words = corpus.prose_bm25.matched(f, told.prose)
    else:
        words = corpus.file_bm25.matched(f, told.files)
    if words:
        # Shared words are the least specific evidence, whatever they weigh: shown last.
        reasons.append("mentions " + ", ".join(f"`{w}`" for w in words))
    entries = corpus.file_entries[f]
    # Only where the run entered one of the file's functions does it say which matter.
    entered = {e for e in entries if _ran(corpus.entries[e].unit, ran)}
    units = []
    for e in entries:
        value = float(unit_scores[e]) + sig.unit_bonus.get(e, 0.0)
        if corpus.entries[e].unit.kind == "class":
            value *= weights.class_unit
        elif entered and e not in entered:
            value *= weights.unit_not_run
        if value > 0:
            units.append((value, e))
    units.sort(reverse=True)
    unit_hits = []
    for value, e in units[:5]:
        u = corpus.entries[e].unit
        why = corpus.unit_bm25.matched(e, told.units, limit=4)
        unit_hits.append(
            UnitHit(
                u.qualname,
                u.kind,
                u.start,
                u.end,
                u.signature,
                round(value, 4),
                tuple(why),
                e in entered,
            )
        )
    return FileHit(corpus.paths[f], round(score, 4), tuple(reasons[:6]), tuple(unit_hits))
