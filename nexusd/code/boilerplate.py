"""What a bug report pastes that says nothing about which code is meant.

Issue templates ask for the environment, so reports carry package listings (`pip list`,
`pip freeze`, `show_versions()`), interpreter banners (Python, IPython, conda), test-runner
session headers and hidden template comments. Their words are many and rare (`asn1crypto`,
`Continuum`, `cachedir`) and land on whatever file happens to share them: an IPython banner
put the repository's IPython integration first for a report about polynomial arithmetic.
Pure: text in, the same text with those lines blanked (line numbers are kept).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from nexusd.code.chatter import says_nothing

# What a paste carries on each line that is not the report's: a quote's `> ` (not a `>>>`
# prompt), a CI log's timestamp (`2024-01-01T00:00:00.1234567Z `), terminal colours (also the
# `[0;31m` left when the escape byte was lost).
_LINE_PREFIX = re.compile(
    r"^(?:[ \t]*>(?!>>)(?=[ \t]|$)[ \t]?)+|^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?[ \t]",
    re.M,
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|(?<![\w\]\[])\[(?:\d{1,3};)*\d{1,3}m")
# A closed comment from the start of a line: an unclosed `<!--` in prose is quoted markup.
_COMMENT = re.compile(r"^[ \t]*<!--.*?-->", re.S | re.M)
# A fenced block (its body is group 1), as the miner reads one too: it opens at the start of a
# line (inline ```x``` in prose is not one); its info string holds no backtick, which also
# keeps a long run of backticks linear.
FENCE = re.compile(r"^[ \t>]*```[^`\n]*\n(.*?)(?:```|\Z)", re.S | re.M)
_SPACE = re.compile(r"\s+")
# One package and its version, as listings print them (whitespace squeezed first, so the
# match is linear): `attrs 19.1.0` (pip list), `attrs==19.1.0` (freeze), `numpy: 1.19.2`
# (show_versions), `pytest 4.6.2 /path`, `- Sphinx version: 3.2.1` (issue templates).
_VERSION = re.compile(
    r"(?:[-*] )?(?:[A-Za-z_][\w.\-]*(?:\[[\w,.\-]+\])?|[A-Z][\w.\-]*(?: [\w.\-]+){0,3} version)"
    r"(?:==| ?: ?| )v?(?P<version>\d+(?:\.\w+)+)\S*(?: .*)?"
)
# Lines a listing holds that are not versions: its header and rule, `pandas_gbq : None`.
_IN_LISTING = re.compile(
    r"\s*(?:Package\s+Version\b.*|[-=]{3,}(?:\s+[-=]{3,})*|INSTALLED VERSIONS"
    r"|[A-Za-z_][\w.\-]*\s*:\s*(?:None|not installed|N/A)?)\s*"
)
# A listing is this many version lines, at least half of them `x.y.z`: three decimals in a
# row (`learning_rate: 0.01`, `assert r.mean == 1.5`) are the report's data, not a listing.
MIN_LISTING = 3
# No listing or banner line is longer: longer lines are not matched at all.
MAX_LINE = 300
# What a GitHub issue form prints for a field left empty.
_NO_RESPONSE = "_No response_"
# Interpreter banners and test-runner headers, line by line.
_BANNER = re.compile(
    r"^\s*(?:"
    r"Python \d+\.\d+\.\d+\S*\s+(?:\|.*|\((?:default|main|tags/|heads/|v\d).*)"  # a build
    r"|\[(?:GCC|Clang|MSC)\b.*\] on \w+"
    r"|Type ['\"]?(?:help|copyright)['\"]?,.*for more information\.?"
    r"|IPython \d+(?:\.\d+)*\S* -- An enhanced Interactive Python.*"
    r"|\?\s+-> Introduction and overview of IPython's features\."
    r"|%quickref -> Quick reference\."
    r"|help\s+-> Python's own help system\."
    r"|object\?\s+-> Details about 'object'.*"
    # A traceback's own lines: its frames are evidence, its header is not (as a request's
    # first line, it became the title: `Traceback`, `recent`, `call`, `last` weighed most).
    r"|Traceback \(most recent call last\):"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    # An issue form's empty field (`response` is a word of code, not of the report).
    rf"|{_NO_RESPONSE}"
    r")\s*$"
)
# A test session's header: from its first line to `collected N items` (pytest prints no blank
# line in between, and plugins add lines of any shape: `benchmark: …`, `Using --randomly-seed=1`,
# `hypothesis profile 'default'`). Without that end in reach only pytest's own keys go: a
# report's next lines (`E   KeyError: …`, pasted YAML) are evidence, and `plugins: …` in prose
# outside a header is the report's own.
_SESSION = re.compile(
    r"\s*(?:=+ test session starts =+|platform \w+ -- Python \d.*"
    r"|Test session starts \(platform: .*)\s*"  # pytest-sugar
)
# `collected 3 items`, or pytest-xdist's `2 workers [4 items]` and `gw0 [4] / gw1 [4]`.
_SESSION_END = re.compile(
    r"\s*(?:collect(?:ed|ing) (?:\d+ items?|\.\.\.)|\d+ workers \[|gw\d+ \[\d+\]).*"
)
_SESSION_KEY = re.compile(
    r"\s*(?:cachedir|rootdir|configfile|testpaths|plugins|hypothesis profile|Using --\w[\w-]*)"
    r"\b.*"
)
MAX_HEADER = 20
# An environment report's own header (`xr.show_versions()`, pandas', scikit-learn's
# `System:`, a `module | version` table): what follows is the machine, not the code.
_ENV_HEADER = re.compile(
    r"\s*(?:INSTALLED VERSIONS|System(?: information)?:|\|?\s*module\s*\|\s*version\s*\|?)\s*",
    re.IGNORECASE,
)
# Its lines: `machine: x86_64`, `LC_ALL: None`, `platform | Linux-5.4`, `Python deps:`, rules,
# and a build's continuation (`[GCC 7.3.0]`).
_ENV_LINE = re.compile(
    r"\s*(?:\|?\s*[A-Za-z][\w .()/+\-]{0,40}\s*(?::|\|)\s*(?:\S.{0,200})?"
    r"|[-=|: ]{3,}|\[[^\]]{1,80}\])\s*"
)


def _version(line: str) -> str | None:
    """The version a listing line gives, or None."""
    m = _VERSION.fullmatch(_SPACE.sub(" ", line.strip()))
    return m.group("version") if m else None


def _blank_listings(lines: list[str], keep: list[bool]) -> None:
    run: list[int] = []
    versions: list[str] = []
    for number, line in enumerate([*lines, ""]):
        if line.strip() and len(line) <= MAX_LINE:
            version = _version(line)
            if version is not None or _IN_LISTING.fullmatch(line):
                run.append(number)
                if version is not None:
                    versions.append(version)
                continue
        full = sum(1 for v in versions if v.count(".") >= 2)
        if len(versions) >= MIN_LISTING and 2 * full >= len(versions):
            for i in run:
                keep[i] = False
        run, versions = [], []


def _blank_environment(lines: list[str], keep: list[bool]) -> None:
    """From an environment report's header, its lines up to the first that is not one
    (one blank line between its parts is crossed: `System:` … `BLAS:` … `Python deps:`)."""
    number = 0
    while number < len(lines):
        if not _fits(_ENV_HEADER, lines[number]):
            number += 1
            continue
        last = number
        probe = number + 1
        while probe < len(lines):
            line = lines[probe]
            if _fits(_ENV_LINE, line):
                last = probe
            elif line.strip() or probe - last > 1:
                break
            probe += 1
        keep[number : last + 1] = [False] * (last + 1 - number)
        number = last + 1


def _fits(pattern: re.Pattern[str], line: str) -> bool:
    return len(line) <= MAX_LINE and pattern.fullmatch(line) is not None


def _header_last(lines: list[str], first: int) -> int:
    """The last line of the session header that starts at `first`."""
    for number in range(first + 1, min(first + MAX_HEADER, len(lines))):
        if not lines[number].strip():
            break
        if _fits(_SESSION_END, lines[number]):
            return number
    last = first
    while last + 1 < len(lines) and (
        _fits(_SESSION_KEY, lines[last + 1]) or _fits(_SESSION, lines[last + 1])
    ):
        last += 1
    return last


def _blank_session_headers(lines: list[str], keep: list[bool]) -> None:
    number = 0
    while number < len(lines):
        if _fits(_SESSION, lines[number]):
            last = _header_last(lines, number)
            keep[number : last + 1] = [False] * (last + 1 - number)
            number = last
        number += 1


# A line run at a prompt: Python, IPython, a shell's (`$ `, `(venv) $ `, `user@host:~/x$ `,
# `% `, `❯ `, PowerShell's `PS C:\> `, `PS> ` or `PS HKLM:\> `, cmd's `C:\> `): code the
# reporter ran, not a title. Not prose that looks like one: a percentage (`~50% slower`), a
# sentence on a sign (`% of rows dropped`, `$ sign not escaped`, `$ 5 fee`) or a postscript
# (`PS: x > y`). A command may be any word but these (`$ for f in *`, `$ as --version`).
_PROSE_AFTER_SIGN = (
    r"(?:(?:a|an|and|are|by|from|in|is|of|on|or|the|to|was|with)[ \t]"
    r"|(?:sign|symbol|character|char|literal|variable|placeholder|quote)s?\b"
    r"|escap(?:e|es|ed|ing)\b|expansion\b|interpolation\b|operator\b|formatting\b"
    r"|\d[\d.,]*[ \t])"
)
PROMPT = re.compile(
    r"^[ \t]*(?:>>>|\.\.\. |In \[\d+\]:|Out\[\d+\]:"
    # Bounded: a long line of `a:a:a…` must not be read once per colon.
    r"|(?![~≈]?\d[\d.,]*% )(?:\([^()\n]{0,64}\)[ \t]*)?"
    rf"(?:[^\s$#%@:~]{{0,64}}[@:~][^\s$#%]{{0,256}})?[$%❯] (?!{_PROSE_AFTER_SIGN})"
    r"|PS(?:[ \t]*|[ \t]+[^\s>]{0,64}[:/\\~][^>\n]{0,256})> |[A-Za-z]:\\[^>\n]*> )"
)
# A form's markup on a line of its own, skipped on the way to the title: a heading, a bold
# label or a line ending in a colon in a form's words only (`### Describe the bug`, `**To
# Reproduce**`, `Expected behavior:`; `## Fix parse_expr` is a title), a salutation (`Hi
# all,`), a checklist item (`- [x] I searched the issues`), a note's label (`[!NOTE]`), an
# issue form's empty field (`_No response_`) and a line with no word (`---`, `#`, `___`).
_HEADING = re.compile(r"[ \t]*#{1,6}(?:[ \t]+|$)")
_BOLD = re.compile(r"[ \t]*(\*\*|__)")
_CHECKLIST = re.compile(r"[ \t]*(?:[-*+] \[[ xX]\] |\[!\w+\][ \t]*$)")
_FENCE_LINE = re.compile(r"[ \t]*(?:```|~~~)")
_FORM_WORDS = frozenset(
    {
    "a", "additional", "actual", "and", "any", "behavior", "behaviour", "bug", "checklist",
    "context", "current", "describe", "description", "details", "environment", "error",
    "expected", "feature", "happened", "how", "information", "is", "it", "logs", "minimal",
    "motivation", "notes", "of", "or", "other", "output", "problem", "proposal", "question",
    "report", "reproduce", "reproducible", "reproduction", "request", "result", "results",
    "screenshots", "solution", "steps", "summary", "system", "the", "to", "traceback",
    "version", "versions", "what",
    # GitHub's default templates and issue forms: `**Is your feature request related to a
    # problem? Please describe.**`, `### Is there an existing issue for this?`, `**Desktop
    # (please complete the following information):**`, `### Anything else?`, `### Relevant
    # log output`, `**Describe alternatives you've considered**`.
    "alternatives", "an", "anything", "checks", "complete", "considered", "d", "desktop",
    "else", "existing", "following", "for", "issue", "like", "log", "please", "related",
    "relevant", "smartphone", "there", "this", "ve", "you", "your",
    # Other projects' issue forms: `### Initial Checks`, `### System Info`, `### Search
    # before asking`, `### Checked other resources`, `### Installed Versions`, `### Operating
    # System`, `### Actual outcome`, `### Who can help?`, `### Pitch`, `### Stack trace`.
    "asking", "before", "can", "checked", "example", "full", "help", "info", "initial",
    "installed", "message", "operating", "outcome", "pitch", "prerequisites", "resources",
    "search", "stack", "trace", "who",
    }
)  # fmt: skip
_WORD = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W_]")  # `___` (a rule) has no word
# A plain line is a form's label only where it ends like one (`Describe the bug:`, copied
# from a rendered form): `Log the traceback` or `Request context` is a report's title in a
# form's words. A short line ending in a comma is a salutation (`Hi all,`, `Dear
# maintainers,`), not a title.
_LABEL_END = re.compile(r":[ \t]*$")
_SALUTATION = re.compile(r"^[ \t]*(?:[^\s,]+[ \t]+){0,3}[^\s,]+,[ \t]*$")
# How far into a report its title is looked for (a template's comments come first).
TITLE_READ_CHARS = 65_536


def title(text: str) -> str:
    """The line that says what a report is about: its first with words, past a template's
    comments, headings, labels and checklists, a salutation and lines that only say there is
    a report (`code/chatter.py`); none where that line was run at a prompt or opens a code
    block. Banners and listings are left for the miner to blank, as on any title."""
    text = text[:TITLE_READ_CHARS].lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    for raw in _blank_comments(unwrap(text)).split("\n"):
        if _FENCE_LINE.match(raw) or PROMPT.match(raw):
            return ""
        if not _LETTER.search(raw) or _CHECKLIST.match(raw) or _SALUTATION.match(raw):
            continue
        if raw.strip() == _NO_RESPONSE:  # an issue form's empty field: its next heading follows
            continue
        if says_nothing(raw):  # `Bug report`, `Can someone help?`: the title comes next
            continue
        heading = _HEADING.match(raw)
        line = raw[heading.end() :].rstrip(" \t#") if heading else raw  # `# Title` is `Title`
        label = line if heading else _bold_label(raw)
        if label is None and _LABEL_END.search(raw):
            label = raw
        if label is None or not _in_form_words(label):
            return line.strip()
    return ""


def search_title(query: str) -> str:
    """A search's title: a one-line query is all title, unless it was run at a prompt; a
    longer one's is found as a report's (`title`: a report pasted into a search ranks as the
    plan for it does)."""
    if pasted(query):
        return title(query)
    line = query.strip()
    return "" if PROMPT.match(line) else line


def pasted(query: str) -> bool:
    """Whether a query holds more than one line (a paste), blank lines around it aside."""
    line = query.strip()
    return "\n" in line or "\r" in line


def _bold_label(line: str) -> str | None:
    """The label of a line that is all bold (`**To Reproduce**:`), or None."""
    bold = _BOLD.match(line)
    if bold is None:
        return None
    rest = line[bold.end() :].rstrip(" \t:")
    return rest[: -len(bold.group(1))] if rest.endswith(bold.group(1)) else None


def _in_form_words(label: str) -> bool:
    """Whether a heading's or label's words are all a form's (`Describe the bug`)."""
    words = [w.lower() for w in _WORD.findall(label)]
    return bool(words) and all(w in _FORM_WORDS for w in words)


def _blank_comments(text: str) -> str:
    """`text` with its template comments blanked (line numbers kept)."""
    # Only up to the last `-->`: an unclosed `<!--` after it would scan to the end, once each.
    end = text.rfind("-->") + 3
    if end < 3:
        return text
    # Markup a reporter pastes in a code block (an HTML template) is evidence, not a note.
    # The blocks do not overlap and come in order: the one a comment may be in is the last
    # to start at or before it (a bisection, not a scan of every block for every comment).
    fences = [m.span() for m in FENCE.finditer(text)]
    starts = [a for a, _ in fences]

    def blank(m: re.Match[str]) -> str:
        i = bisect_right(starts, m.start()) - 1
        if i >= 0 and m.start() < fences[i][1]:
            return m.group(0)
        return "\n" * m.group(0).count("\n")

    return _COMMENT.sub(blank, text[:end]) + text[end:]


def unwrap(text: str) -> str:
    """`text` without quote markers, CI timestamps and colour codes at its lines' starts."""
    return _LINE_PREFIX.sub("", _ANSI.sub("", text))


def strip(text: str) -> str:
    """`text` with template comments, package listings, environment reports and banners
    blanked out."""
    lines = _blank_comments(text).split("\n")
    keep = [not _fits(_BANNER, line) for line in lines]
    _blank_listings(lines, keep)
    _blank_environment(lines, keep)
    _blank_session_headers(lines, keep)
    return "\n".join(line if kept else "" for line, kept in zip(lines, keep, strict=True))
