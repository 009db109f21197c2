"""What a request says about code: identifiers, dotted names, paths, stack frames, errors.

Pure: text in, a `CodeQuery` out. Words inside code (backticks, fenced blocks, tracebacks)
and words shaped like code (`snake_case`, `CamelCase`, `a.b.c`, `f(`) weigh more than prose.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from nexusd.code import boilerplate
from nexusd.code.chatter import without_opening
from nexusd.code.operators import operator_words
from nexusd.code.pointers import named_lines, without_links
from nexusd.code.tokens import IDENT, STOP, marked, tokens

_TICKS = re.compile(r"`([^`\n]{1,300})`")
_DOTTED = re.compile(r"\b[^\W\d]\w*(?:\.[^\W\d]\w*)+\b")
# A path starts where a run of path characters does, never inside one (`a/a/a…` and `-----`
# were quadratic: 2.4 s for 20 KB); `\` separates as `/` does (Windows).
_PATH = re.compile(
    r"(?<![\w.\-])(?<![\w.\-][/\\])((?:[\w.-]+[/\\])*[\w.-]+\."
    r"(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|c|h|cc|cpp"
    r"|cxx|hpp|hh|rb|php|cs|kt|scala|swift|m|lua|sh|pl|r|toml|cfg|ini|yaml|yml|json|rst|md|txt))"
    r"(?::(\d+))?\b"
)
# Stack frames of several runtimes, each with named groups path, line and (maybe) func.
_PYTHON_FRAMES = (
    re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>[\w<>.]+))?'),
    re.compile(
        r"^[ \t]*(?P<path>(?:[A-Za-z]:)?[\w./\\-]+\.py):(?P<line>\d+):(?: in (?P<func>[\w<>.]+))?",
        re.M,
    ),
    # IPython 8 and later: `File ~/src/pkg/plot.py:804, in Plot.plot(self, pyplot)`.
    re.compile(r"File (?P<path>[^\s\"',]+\.pyx?):(?P<line>\d+), in (?P<func>[\w<>.]+)"),
    # IPython 7 and earlier: `/venv/…/pkg/mathml.py in doprint(self, expr)`, then the
    # source around the frame's line, which is marked `---> 38` (a blank source line is
    # its number alone: `    718`).
    re.compile(
        r"^(?P<path>[~\w./\\:-]+\.pyx?) in (?P<func>[\w<>.]+)\(.*\n"
        r"(?:[ \t]+\d+(?:[ \t].*)?\n|[ \t]*\n){0,20}?-+>\s*(?P<line>\d+)",
        re.M,
    ),
)
# These runtimes print the failing call first (JavaScript, Java, Go, Rust, C debuggers).
_INNERMOST_FIRST_FRAMES = (
    # Node and browsers: `at async loadAll (/app/src/loader.ts:40:3)`, `at new Router (…)`,
    # `at file:///app/index.mjs:3:1`, `at render (webpack://app/./src/render.js?ab:12:5)`.
    re.compile(
        r"at (?:async |new )?(?:(?P<func>[\w.$<>]+) )?\(?"
        r"(?:file://(?:/(?=[A-Za-z]:))?|webpack://[^/\s]*/)?"
        r"(?P<path>(?:[A-Za-z]:)?[\w./\\-]+\.[mc]?[jt]sx?)(?:\?[^:\s)]*)?:(?P<line>\d+):\d+"
    ),
    re.compile(r"at (?P<func>[\w.$]+)\((?P<path>\w+\.java):(?P<line>\d+)\)"),
    # Go prints the function on the line above its file (`main.(*DB).Get(…)`); Rust's
    # backtrace says `at ./src/lexer.rs:88:14`.
    re.compile(
        # No parenthesis in the name but a receiver's (`(*DB)`): `()()()…` stays linear.
        r"(?:^(?P<func>[\w./-]+(?:\(\*?[\w.-]+\)[\w./-]*)?)\([^\n]*\)[ \t]*\n)?"
        r"^[ \t]*(?:at )?(?P<path>[\w./-]+\.(?:go|rs|c|cc|cpp)):(?P<line>\d+)",
        re.M,
    ),
)
# Where a run of innermost-first frames ends: `Caused by: …`, a new error's first line, a
# goroutine's header (not Rust's numbered `  3: core::panicking::…` lines between frames).
_TRACE_BREAK = re.compile(
    r"^[ \t]*(?:Caused by:|(?:Uncaught )?[\w.$]*(?:Error|Exception)\b|goroutine \d+ "
    r"|thread '[^'\n]*' panicked)",
    re.M,
)
# Rust's panic message names the faulting line itself (1.73 and later: `panicked at
# src/lexer.rs:88:14:`; before: `panicked at 'msg', src/lexer.rs:88:14`), before any backtrace.
_RUST_PANIC = re.compile(
    r"panicked at (?:'[^'\n]*', )?(?P<path>[\w./-]+\.rs):(?P<line>\d+):\d+(?P<func>)"
)
# The header of a Python traceback (IPython prints it too, above frames of its own form).
TRACEBACK_HEADER = re.compile(r"Traceback \(most recent call last\)")
# Other runtimes' traces, each as plain a mark as Python's header:
# Java's `at pkg.Cls.m(Cls.java:12)` and `Exception in thread`, Go's `panic:` and
# `goroutine 1 [running]`, Rust's `thread 'main' panicked at`, Node's `at f (/app/x.js:3:9)`.
_RUNTIME_TRACE = re.compile(
    r"^[ \t]*at [\w$.<>]+\([\w$]+\.(?:java|kt|scala):\d+\)"
    r"|Exception in thread \""
    r"|^panic: |^goroutine \d+ \[\w+"
    r"|thread '[^'\n]*' panicked at"
    r"|^[ \t]+at (?:[\w$.<>\[\] ]+ \()?(?:/|[A-Za-z]:\\|file:|node:)[^\s()]*:\d+:\d+\)?$",
    re.MULTILINE,
)


_EXC = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt|Failure))\b")
_MESSAGE = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning):\s*(.{8,200})")
_CALL = re.compile(r"\b([^\W\d]\w*)\s*\(")
# `x = …`, `a, b = …`, `>>> expr = …`, `In [3]: t = …`: names the reporter's snippet binds.
_PROMPT = r"(?:>>>|In \[\d+\]:)"  # a Python or IPython prompt
_ASSIGNED = re.compile(
    rf"^(?:[ \t]*{_PROMPT}[ \t]*)?"  # at the margin or after a prompt: not `    key=1,`
    r"([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*)[ \t]*=(?!=)",
    re.M,
)
_IMPORTED = re.compile(
    rf"^[ \t]*(?:{_PROMPT}[ \t]*)?(?:import|from)[ \t]+"
    r"([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)",
    re.M,
)
_ATTRIBUTES = re.compile(r"\b([a-z_][a-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
# The lines of a pasted REPL session: `>>> …`, `... …`, `In [3]: …`, `Out[3]: …`.
_PROMPT_LINE = re.compile(rf"^[ \t]*(?:{_PROMPT}|\.\.\.|Out\[\d+\]:).*$", re.M)

# How much a word counts, by where it was seen.
W_PROSE = 1.0
W_CODE = 2.0
W_TRACE = 3.0
# The title says in a line what the report is about. Raised from 2 to 4 on the 110 reports of
# benchmarks/localization.py (Acc@1 0.600 -> 0.627, no repository lower); 3 to 6 is a plateau.
W_TITLE = 4.0
QTF_DAMPING = 0.2
# Names that only a pasted snippet (fenced, or REPL lines) uses: on the 110 reports of
# benchmarks/localization.py Acc@3 +3 reports and Acc@5 +1, Acc@1 unchanged; on 189
# held-out reports of other repositories unchanged (benchmarks/README.md, seventh session).
W_SNIPPET_ONLY = 0.5
# A request pasted with a megabyte of log is mined by its head (what it is about) and its
# tail (where a traceback ends); the middle costs seconds of regex work and adds noise.
MAX_HEAD_CHARS = 16_000
MAX_TAIL_CHARS = 4_000
# Boilerplate is blanked in this much of a huge request first (its head, and a quarter as much
# of its tail): ~30 ms where the whole of a 10 MB log would take seconds.
MAX_READ_CHARS = 200_000
_BLANK_LINES = re.compile(r"\n(?:[ \t]*\n){2,}")


@dataclass(frozen=True)
class Frame:
    """One stack frame of a traceback the request quotes."""

    path: str
    line: int
    function: str = ""


def frame_function(frames: Sequence[Frame], depth: int) -> str:
    """The function of `frames[depth]`; for a comprehension or lambda (`<listcomp>`), the
    function of the next frame out in the same file, which it runs in ("" if none)."""
    for frame in reversed(frames[: depth + 1]):
        if frame.path != frames[depth].path:
            break
        if frame.function.isidentifier():
            return frame.function
    return ""


@dataclass(frozen=True)
class CodeQuery:
    """The code-shaped evidence of a request, each item weighted by where it was found."""

    terms: tuple[tuple[str, float], ...]  # token → weight, for lexical search
    identifiers: tuple[tuple[str, float], ...]  # whole names as written, for definitions
    paths: tuple[str, ...] = ()  # file paths the text names (as written)
    # (path, line) the prose points at (`jsonrep.py:227`, "jsonrep.py at line 227"), not frames
    lines: tuple[tuple[str, int], ...] = ()
    modules: tuple[str, ...] = ()  # dotted names that may be modules (`pkg.mod`)
    frames: tuple[Frame, ...] = ()  # outermost first: the last is nearest the fault
    exceptions: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    text: str = ""  # the text mined (head and tail of a huge one), for quoted messages
    title_terms: tuple[tuple[str, float], ...] = ()  # the title's own terms, mined alone

    def is_empty(self) -> bool:
        """True when the text holds nothing to search code by."""
        return not (self.terms or self.identifiers or self.paths or self.frames)


def _code_spans(text: str) -> list[str]:
    spans = [m.group(1) for m in boilerplate.FENCE.finditer(text)]
    rest = boilerplate.FENCE.sub(" ", text)
    spans += [m.group(1) for m in _TICKS.finditer(rest)]
    return spans


def _looks_like_code(word: str) -> bool:
    """`snake_case`, `camelCase`, `CamelCase` with an inner capital, `_private`, `ALLCAPS1`."""
    if "_" in word.strip("_") or word.startswith("_"):
        return True
    inner = word[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in word)


def quotes_a_trace(text: str) -> bool:
    """Whether `text` pastes a stack trace of Python or another runtime (a bug's mark)."""
    return TRACEBACK_HEADER.search(text) is not None or _RUNTIME_TRACE.search(text) is not None


def _frames(text: str) -> list[Frame]:
    """The frames the report prints, each traceback outermost first, whatever its runtime."""
    found: list[tuple[int, int, bool, Frame]] = []
    # A Rust panic's own line goes first in its backtrace's run: turned round, it is last.
    groups = ((_PYTHON_FRAMES, False), ((*_INNERMOST_FIRST_FRAMES, _RUST_PANIC), True))
    for patterns, innermost_first in groups:
        for pattern in patterns:
            for m in pattern.finditer(text):
                parts = m.groupdict()
                func = (parts.get("func") or "").split(".")[-1].strip("()*")
                frame = Frame(parts["path"].replace("\\", "/"), int(parts["line"]), func)
                found.append((m.start(), m.end(), innermost_first, frame))
    # In the order the report prints them: one report can paste a script's traceback beside an
    # IPython one. A run of innermost-first frames is turned round, so that for every runtime
    # the last frame of a trace is the one nearest the fault.
    found.sort(key=lambda item: item[0])
    ordered: list[Frame] = []
    run: list[Frame] = []
    last_end = 0
    for start, end, innermost_first, frame in found:
        # A new trace (Java's `Caused by:`, a second error pasted after the first) starts a
        # new run: each is turned round on its own, the later one (the root cause) last.
        if run and _TRACE_BREAK.search(text, last_end, start):
            ordered.extend(reversed(run))
            run = []
        last_end = max(last_end, end)
        if innermost_first:
            run.append(frame)
            continue
        ordered.extend(reversed(run))
        run = []
        ordered.append(frame)
    ordered.extend(reversed(run))
    return list(dict.fromkeys(ordered))


def _foreign(text: str, code_text: str) -> set[str]:
    """Names that are not the repository's: the reporter's own variables (`expr = …`), and
    names the report reaches only through a standard-library module it imports
    (`os.path.join`), which otherwise claim whatever method of the repository shares the
    name. The caller keeps any the report's prose or title says."""
    out: set[str] = set()
    for m in _ASSIGNED.finditer(code_text):
        # Lower case only: `FILE_UPLOAD_PERMISSIONS = 0o644` sets one of the project's settings.
        out.update(n.strip() for n in m.group(1).split(",") if n.strip().islower())
    # Only modules the report imports: `array.reshape` is more often a variable than the module.
    imported = {
        name.strip().split(".")[0]
        for m in _IMPORTED.finditer(text)
        for name in m.group(1).split(",")
    } & sys.stdlib_module_names
    through: Counter[str] = Counter()
    for m in _ATTRIBUTES.finditer(text):
        if m.group(1) in imported:
            for part in m.group(2).split(".")[1:]:
                through[part] += 1
    seen = Counter(IDENT.findall(text))
    out.update(name for name, n in through.items() if n >= seen[name])
    return out


# The reporter's machine, not the repository: `/home/me/venv/lib/python3.12/site-packages/`,
# or a home folder (`/home/me/`, `C:/Users/me/`), whose words are the reporter's own.
_ENV_PREFIX = re.compile(
    r"^.*/(?:site|dist)-packages/|^.*/node_modules/|^(?:.*/)?(?:home|Users)/[^/]+/"
)
# A frame in an installed Python's standard library (`/usr/lib/python3.11/json/__init__.py`,
# `C:/Python39/Lib/`) is no file of the repository, however its path ends (flask has a
# `json/__init__.py` too); a checkout's own `Lib/` (CPython's) is the repository's.
_STDLIB = re.compile(
    r"(?:^|/)(?:lib/python\d(?:\.\d+)?|Python\d*/Lib)/(?!(?:site|dist)-packages/)", re.I
)


def _frame_words(path: str) -> str:
    """The part of a frame's path that can name a repository file (ranks no report of the
    299 differently; it keeps `site`, `packages`, `venv` out of the reasons)."""
    return _ENV_PREFIX.sub("", path)


def within_reach(text: str, max_json: int = 1_000_000) -> tuple[str, int]:
    """What `mine` reads of `text` (its head and tail: a longer text ranks the same), cut
    further in the middle until its JSON fits `max_json` bytes (the daemon reads a request
    line of up to 1 MiB); and how many characters were left out."""
    head, tail = MAX_READ_CHARS, MAX_READ_CHARS // 4
    kept = _ends(text, head, tail)
    while len(json.dumps(kept)) > max_json:  # `\uXXXX` escapes: six bytes a character
        head, tail = head * 3 // 4, tail * 3 // 4
        kept = _ends(text, head, tail)
    return kept, 0 if kept is text else len(text) - head - tail


def _ends(text: str, head: int, tail: int) -> str:
    """`text`, or its first `head` and last `tail` characters when it is longer."""
    return text if len(text) <= head + tail else f"{text[:head]}\n{text[-tail:]}"


# A fence's language label (```javascript, ```cpp) is markup, not a word of the report.
_FENCE_INFO = re.compile(r"^([ \t>]*```)[^`\n]+$", re.MULTILINE)


def mine(text: str, *, title: str = "") -> CodeQuery:
    """The code query of a request's text (goal, blockers, outcome); `title` weighs W_TITLE."""
    # Boilerplate goes before the cut: a pasted `pip freeze` at the end must not take the tail
    # a traceback above it needed (and `> `-quoted or timestamped lines must match as lines).
    text = boilerplate.strip(boilerplate.unwrap(_ends(text, MAX_READ_CHARS, MAX_READ_CHARS // 4)))
    text = without_opening(text)
    text = _FENCE_INFO.sub(r"\1", without_links(text))
    if len(text) > MAX_HEAD_CHARS + MAX_TAIL_CHARS:
        text = _ends(_BLANK_LINES.sub("\n\n", text), MAX_HEAD_CHARS, MAX_TAIL_CHARS)
    title = without_links(boilerplate.strip(boilerplate.unwrap(title[:MAX_TAIL_CHARS])))
    spans = _code_spans(text)
    frames = _frames(text)
    trace_text = "\n".join(f"{_frame_words(f.path)} {f.function}" for f in frames)
    weights: dict[str, float] = defaultdict(float)
    counts = Counter(tokens(text))
    for word in counts:
        weights[word] = max(weights[word], W_PROSE)
    for word in set(tokens("\n".join(spans))):
        weights[word] = max(weights[word], W_CODE)
    for word in set(tokens(title)):
        weights[word] = max(weights[word], W_TITLE)
    for word in set(tokens(trace_text)):
        weights[word] = max(weights[word], W_TRACE)
    # `x**2 * y` is about the code implementing powers and products (`__pow__`, `Mul`):
    # words no name of the snippet holds (sympy-13895 32 → 4, benchmarks/README.md).
    for word in operator_words("\n".join(spans)):
        weights[word] = max(weights[word], W_CODE)
    for word in operator_words(title, prose=True):
        weights[word] = max(weights[word], W_TITLE)
    for word, n in counts.items():
        # A word the report keeps coming back to is what it is about (BM25's query-side
        # term frequency, dampened: Acc@1 +0.01 on the 110 reports, flat from 0.15 to 0.25).
        weights[word] *= 1.0 + QTF_DAMPING * math.log(n)

    idents: dict[str, float] = defaultdict(float)
    code_text = "\n".join(spans)
    for source, code in ((text, False), (code_text, True)):
        for m in IDENT.finditer(source):
            word = m.group(0)
            if len(word) < 3 or word.lower() in STOP:
                continue
            weight = W_CODE if code or _looks_like_code(word) else W_PROSE
            # Ruby's `save!` and `valid?` are names of their own, beside `save` and `valid`.
            for name in filter(None, (word, marked(source, m))):
                idents[name] = max(idents[name], weight)
    for m in _CALL.finditer(text):
        if m.group(1).lower() not in STOP:
            idents[m.group(1)] = max(idents[m.group(1)], W_CODE)
    for dotted in _DOTTED.findall(text):
        for part in dotted.split("."):
            if len(part) >= 3 and part.lower() not in STOP:
                idents[part] = max(idents[part], W_CODE)
    for frame in frames:
        if frame.function and not frame.function.startswith("<"):
            idents[frame.function] = max(idents[frame.function], W_TRACE)
    exceptions = list(dict.fromkeys(_EXC.findall(text)))
    messages = [m.group(1).strip() for m in _MESSAGE.finditer(text)]
    # What the prose, the title, a frame or an error message names is what the report is
    # about, wherever else the name appears.
    said = set(IDENT.findall(_PROMPT_LINE.sub(" ", boilerplate.FENCE.sub(" ", text))))
    said |= set(IDENT.findall(title)) | {frame.function for frame in frames}
    said |= set(exceptions) | set(IDENT.findall("\n".join(messages)))
    for name in _foreign(text, code_text) - said:
        idents.pop(name, None)
    # A name only the reporter's snippet uses (`models.Model`, `CharField` in a model they
    # paste) is the API any such code touches; a name the report says is the topic.
    for name in idents:
        if name.rstrip("?!") not in said:
            idents[name] *= W_SNIPPET_ONLY
    titled = set(IDENT.findall(title))
    for name in idents:
        if name.rstrip("?!") in titled:
            # The title says what the report is about: a name in it weighs W_TITLE times more.
            idents[name] *= W_TITLE
    paths = list(dict.fromkeys(m.group(1).replace("\\", "/") for m in _PATH.finditer(text)))
    lines = named_lines(text, _PATH, frames)
    modules = [d for d in dict.fromkeys(_DOTTED.findall(text)) if not _PATH.fullmatch(d)]
    return CodeQuery(
        terms=tuple(sorted(weights.items())),
        identifiers=tuple(sorted(idents.items())),
        paths=tuple(paths),
        lines=lines,
        modules=tuple(modules),
        # Their words and functions stay evidence (`reprlib` led to the code wrapping it).
        frames=tuple(f for f in frames if not _STDLIB.search(f.path)),
        exceptions=tuple(exceptions),
        messages=tuple(dict.fromkeys(messages)),
        text=f"{title}\n{text}" if title and title not in text else text,
        title_terms=_title_terms(title),
    )


def _title_terms(title: str) -> tuple[tuple[str, float], ...]:
    """The title's terms mined on their own, with the operations its prose writes (`x**2`)."""
    if not title.strip():
        return ()
    weights = dict(mine(title).terms)
    for word in operator_words(title, prose=True):
        weights[word] = max(weights.get(word, 0.0), W_PROSE)
    return tuple(sorted(weights.items()))
