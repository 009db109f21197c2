"""The evidence a request gives for each file: its words, the names it uses that a file
defines, the paths and modules it names, its traceback frames and the messages it quotes.

Each signal is one score per file, divided by its best or capped at 1 (`Signals.add`);
`rank.combine` weighs them. A signal also leaves its reasons and raises the units it
points at.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from nexusd.code.corpus import Corpus
from nexusd.code.lexical import Floats
from nexusd.code.messages import word_count
from nexusd.code.qualified import owner_members
from nexusd.code.query import W_PROSE, CodeQuery, Frame, frame_function
from nexusd.code.units import at_line
from nexusd.protocol.inline import inline_code

# A quoted message held by more files than this is a stock phrase, not evidence.
MESSAGE_MAX_FILES = 2
# Frames of one file named in its reason, innermost first.
MAX_FRAMES_SHOWN = 3
# A code file with no class or function (a locale table, a module of constants) has no unit
# for its words to match, so its whole text stands in as its best unit, at this share of its
# file score (`Corpus.unitless`). On the 165 multilingual reports: 6 up (two to first place),
# 5 down by one place or two, none out of the first five; of the other 268, one rank beyond
# the tenth fell by one. 1.0 costs first places (benchmarks/README.md, 27th session).
UNITLESS_SHARE = 0.7


@dataclass
class Signals:
    """Every signal's scores for a query, the reasons they give and the units they raise."""

    n: int
    scores: dict[str, Floats] = field(default_factory=dict)
    # Per file, (signal, strength within it, text): shown strongest signal first.
    reasons: dict[int, list[tuple[str, float, str]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    unit_bonus: dict[int, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, name: str, values: Floats, *, scale: float | None = None) -> None:
        """Scores divided by their best (relative evidence), or by `scale` and capped at 1
        (evidence with a strength of its own: a named path is a named path)."""
        if scale is not None:
            self.scores[name] = np.minimum(values / scale, 1.0)
            return
        top = float(values.max()) if len(values) else 0.0
        self.scores[name] = values / top if top > 0 else values


def _def_signal(corpus: Corpus, query: CodeQuery, sig: Signals) -> None:
    """Files that define a name the request uses (a unit, or an upper-case constant a module
    sets), weighted by how few files define it."""
    values = np.zeros(sig.n)
    n_files = max(len(corpus.paths), 1)
    # Ruby's `save!` written and defined: the name is that method, not every `save`.
    marked = {n[:-1] for n, _ in query.identifiers if n[-1:] in ("?", "!") and n in corpus.defs}
    for name, weight in query.identifiers:
        if name in marked:
            continue
        entries = corpus.defs.get(name)
        exact = True
        constants = set(corpus.constants.get(name, ()))
        if not entries and not constants:
            entries = corpus.defs_lower.get(name.lower())
            exact = False
        files = {corpus.entries[e].file for e in entries or ()}
        constants -= files
        defining = files | constants
        if not defining:
            continue
        # Squared: a name one file defines is far stronger evidence than one ten files define.
        rarity = math.log(1.0 + n_files / len(defining)) ** 2
        # A constant is always an exact match: the case-blind fallback runs only without one.
        score = weight * rarity * (1.0 if exact else 0.5)
        for f in constants:
            sig.reasons[f].append(("definition", score, f"sets `{name}`"))
        for e in entries or ():
            entry = corpus.entries[e]
            kind = entry.unit.kind
            bonus = score * (1.0 if kind == "class" else 0.8)
            sig.unit_bonus[e] += bonus
            text = f"defines `{entry.unit.qualname}`"
            sig.reasons[entry.file].append(("definition", bonus, text))
        for f in defining:
            values[f] += score
    _qualified(corpus, query, sig, values)
    sig.add("definition", values)


def _qualified(corpus: Corpus, query: CodeQuery, sig: Signals, values: Floats) -> None:
    """Files defining a member the request names with its owner (`Cache::get`): once more,
    as a name only one class defines would count."""
    weights = dict(query.identifiers)
    n_files = max(len(corpus.paths), 1)
    for key in owner_members(query.text):
        entries = corpus.qualified.get(key)
        files = {corpus.entries[e].file for e in entries}
        if not files:
            continue
        owner, member = key.split(".")
        weight = weights.get(member, weights.get(owner, W_PROSE))
        score = weight * math.log(1.0 + n_files / len(files)) ** 2
        # The file, not the unit: the name's own definition bonus already lists it first.
        for e in entries:
            text = f"defines `{corpus.entries[e].unit.qualname}`"
            sig.reasons[corpus.entries[e].file].append(("definition", score, text))
        for f in files:
            values[f] += score


def _path_signal(corpus: Corpus, query: CodeQuery, sig: Signals) -> None:
    values = np.zeros(sig.n)
    framed = {corpus.file_for_path(frame.path) for frame in query.frames}
    for raw in query.paths:
        f = corpus.file_for_path(raw)
        # A file in a traceback is the frame signal's; counting it twice would let the outer
        # frames' files outweigh the innermost one.
        if f is not None and f not in framed:
            values[f] += 1.0
            sig.reasons[f].append(("path", 1.0, f"named as {inline_code(raw)}"))
    for dotted in query.modules:
        f = corpus.resolve_dotted(dotted)
        if f is not None:
            # A package (`pkg` → pkg/__init__.py) says where to look, not which file.
            package = corpus.paths[f].rsplit("/", 1)[-1].startswith("__init__.")
            values[f] += 0.15 if package else 0.5
            sig.reasons[f].append(("path", values[f], f"module `{dotted}`"))
    sig.add("path", values, scale=1.0)
    # A file named at a line (`ranges.h#L285`, `jsonrep.py:227`): the reporter read its code.
    pointed = np.zeros(sig.n)
    for raw, line in query.lines:
        f = corpus.file_for_path(raw)
        if f is not None and f not in framed and not pointed[f]:
            pointed[f] = 1.0
            sig.reasons[f].append(("named_line", 1.0, f"named at line {line}"))
    sig.add("named_line", pointed, scale=1.0)
    # Words of the request that name a folder or a file: `latex printer` → printing/latex.py.
    sig.add("path_words", corpus.path_bm25.scores(dict(query.terms)))


def above_all(sig: Signals, unit_scores: Floats) -> float:
    """A bonus above whatever the words and the other signals give any unit."""
    return float(unit_scores.max(initial=0.0)) + max(sig.unit_bonus.values(), default=0.0) + 1.0


def _named_line_units(corpus: Corpus, query: CodeQuery, sig: Signals, unit_scores: Floats) -> None:
    """The innermost unit holding a line the request points at ("`jsonrep.py` at line
    227") is listed first among its file's: the reporter has read the code."""
    if not query.lines:
        return
    top = above_all(sig, unit_scores)
    for raw, line in query.lines:
        f = corpus.file_for_path(raw)
        if f is None:
            continue
        holding = [
            e
            for e in corpus.file_entries[f]
            if corpus.entries[e].unit.kind != "file"
            and corpus.entries[e].unit.start <= line <= corpus.entries[e].unit.end
        ]
        if holding:
            e = min(
                holding, key=lambda e: corpus.entries[e].unit.end - corpus.entries[e].unit.start
            )
            sig.unit_bonus[e] += top


def _frame_units(corpus: Corpus, query: CodeQuery, sig: Signals, unit_scores: Floats) -> None:
    """The unit of a file's innermost frame is listed first among the file's units: the
    error passed through the outer frames' units, and left the file from that one."""
    top = above_all(sig, unit_scores)
    innermost: dict[int, tuple[Frame, str]] = {}
    for depth, frame in enumerate(query.frames):
        f = corpus.file_for_path(frame.path)
        function = frame_function(query.frames, depth)
        if f is not None and function:
            innermost[f] = (frame, function)
    for f, (frame, name) in innermost.items():
        named = [
            e
            for e in corpus.file_entries[f]
            if corpus.entries[e].unit.kind != "file"
            and corpus.entries[e].unit.qualname.rsplit(".", 1)[-1] == name
        ]
        if named:
            units = [corpus.entries[e].unit for e in named]
            chosen = at_line(units, frame.line)
            sig.unit_bonus[next(e for e, u in zip(named, units, strict=True) if u is chosen)] += top


def _frame_signal(corpus: Corpus, query: CodeQuery, sig: Signals) -> None:
    values = np.zeros(sig.n)
    frames = list(query.frames)
    where: dict[int, list[str]] = defaultdict(list)
    for depth, frame in enumerate(frames):
        f = corpus.file_for_path(frame.path)
        if f is None:
            continue
        # The innermost frames (last in a Python traceback) are nearest the fault; a file
        # counts by its innermost frame, not by how many frames pass through it.
        values[f] = max(values[f], 1.0 + depth / max(len(frames), 1))
        named = f"`{frame.function}` " if frame.function.isidentifier() else ""
        where[f].insert(0, f"{named}line {frame.line}")
    for f, texts in where.items():
        lines = _said_once(texts)
        # One reason per file, its innermost frames first: where the error passed last.
        shown = ", ".join(dict.fromkeys(lines[:MAX_FRAMES_SHOWN]))
        more = ", …" if len(lines) > MAX_FRAMES_SHOWN else ""
        sig.reasons[f].append(("frame", values[f], f"in the traceback at {shown}{more}"))
    sig.add("frame", values, scale=2.0)


def _said_once(lines: list[str]) -> list[str]:
    """Frames' texts without a nameless one (`<listcomp>`, `<lambda>`) whose line a named
    frame already says: a comprehension runs on its function's line."""
    named = {text.split(" ", 1)[1] for text in lines if not text.startswith("line ")}
    return [text for text in lines if not (text.startswith("line ") and text in named)]


def _message_signal(corpus: Corpus, query: CodeQuery, sig: Signals, unit_scores: Floats) -> None:
    """Files whose code raises or logs, word for word, a message the request quotes."""
    values = np.zeros(sig.n)
    best_unit = float(unit_scores.max()) if len(unit_scores) else 1.0
    for piece, owners in corpus.messages.quoted(query.text).items():
        held = [corpus.message_owners[o] for o in owners]
        if len({f for f, _ in held}) > MESSAGE_MAX_FILES:
            continue  # a stock phrase, not the line that printed this report's message
        # Longer quotes are surer: eight words and more count fully.
        score = min(word_count(piece), 8) / 8
        shown = piece if len(piece) <= 60 else piece[:59] + "…"
        for f, e in held:
            values[f] = max(values[f], score)
            sig.reasons[f].append(("message", score, f"raises or logs {_quoted(shown)}"))
            if e >= 0:
                sig.unit_bonus[e] += score * max(best_unit, 1.0)
    sig.add("message", values, scale=1.0)


def _quoted(piece: str) -> str:
    """`piece` in quotes it does not contain (`"--cert" must be set` is not quoted in ")."""
    if '"' not in piece:
        return f'"{piece}"'
    return f"'{piece}'" if "'" not in piece else f"“{piece}”"


def _lexical(corpus: Corpus, query: CodeQuery, sig: Signals) -> Floats:
    terms = dict(query.terms)
    sig.add("lexical_file", corpus.file_bm25.scores(terms))
    sig.add("prose", corpus.prose_bm25.scores(terms))
    unit_scores = corpus.unit_bm25.scores(terms)
    best = np.zeros(sig.n)
    if len(unit_scores):
        np.maximum.at(best, corpus.entry_files, unit_scores)
    sig.add("lexical_unit", best)
    unitless = corpus.unitless
    if len(unitless):
        sig.scores["lexical_unit"][unitless] = UNITLESS_SHARE * sig.scores["lexical_file"][unitless]
    return unit_scores


def signals(corpus: Corpus, query: CodeQuery) -> tuple[Signals, Floats]:
    """Every signal's normalised scores, the reasons, and the units' lexical scores."""
    sig = Signals(len(corpus.paths))
    unit_scores = _lexical(corpus, query, sig)
    _def_signal(corpus, query, sig)
    _path_signal(corpus, query, sig)
    _frame_signal(corpus, query, sig)
    _message_signal(corpus, query, sig, unit_scores)
    _frame_units(corpus, query, sig, unit_scores)
    _named_line_units(corpus, query, sig, unit_scores)
    return sig, unit_scores
