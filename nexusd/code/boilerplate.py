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

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# One package and its version: `attrs 19.1.0`, `attrs==19.1.0`, `numpy: 1.19.2`,
# `pytest 4.6.2 /path`, `- Python version: 3.8.2`, and a listing's own header and rule.
_VERSION = re.compile(
    r"^\s*(?:[-*]\s+)?[A-Za-z][\w.\-\[\] ]{0,40}?\s*(?:==|>=|:|\s)\s*v?\d+(?:\.\w+)+\S*(?:\s.*)?$"
)
_LISTING_HEAD = re.compile(r"^\s*(?:Package\s+Version\b.*|[-=]{3,}(?:\s+[-=]{3,})+\s*)$")
# A listing is this many version lines in a row (a lone `Python 3.8` line is prose).
MIN_LISTING = 3
# Interpreter banners and test-runner headers, line by line.
_BANNER = re.compile(
    r"^\s*(?:"
    r"Python \d+\.\d+(?:\.\d+)?\S*\s*(?:\||\(|on\b).*"  # Python 3.6.9 (default, …) / |Anaconda|
    r"|\[(?:GCC|Clang|MSC)\b.*\] on \w+"
    r"|Type ['\"]?(?:help|copyright)['\"]?,.*for more information\.?"
    r"|IPython \d+(?:\.\d+)*\S* -- An enhanced Interactive Python.*"
    r"|\?\s+-> Introduction and overview of IPython's features\."
    r"|%quickref -> Quick reference\."
    r"|help\s+-> Python's own help system\."
    r"|object\?\s+-> Details about 'object'.*"
    r"|=+ test session starts =+"
    r"|platform \w+ -- Python \d.*"
    r"|(?:cachedir|rootdir|configfile|plugins|hypothesis profile|Using --randomly-seed)[:=] .*"
    r"|collect(?:ed|ing) (?:\d+ items?|\.\.\.).*"
    r")\s*$",
    re.I,
)


def strip(text: str) -> str:
    """`text` with template comments, package listings and banners blanked out."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    keep = [not _BANNER.match(line) for line in lines]
    run: list[int] = []
    for number, line in enumerate([*lines, ""]):
        if line.strip() and (_VERSION.match(line) or _LISTING_HEAD.match(line)):
            run.append(number)
            continue
        if sum(1 for i in run if _VERSION.match(lines[i])) >= MIN_LISTING:
            for i in run:
                keep[i] = False
        run = []
    return "\n".join(line if kept else "" for line, kept in zip(lines, keep, strict=True))
