"""Lines that only say there is a report: not a title, whoever wrote them first.

A person or an agent often opens with a greeting, thanks, a plea or a task (`Bug report`,
`Hi team, can someone help?`, `Please fix the following issue.`, `Investigate the bug below
and find where it happens.`), an issue's number or its link; the report's title comes after.
Taken for the title, such a line made its words weigh four times and chose between the first
two files: with `Bug report` before every report, Acc@1 fell from 0.682 to 0.564 on the 110
(benchmarks/README.md, thirty-second session).

A line is chatter when all its words are such words, at least one of them says so (`bug`,
`please`, `someone`, `thanks`, `#123`: a word of the `_META` set), and it names nothing as
code does. Words that are also the names of features (`help`, `find`, `check`, `task`,
`address`) count only beside such a word: `Task not found`, `Fix help` and `Check in` stay
titles, as does anything in backticks, called, dotted or joined (`help()`, `root.find`,
`--check`, `bug-check`).
"""

from __future__ import annotations

import re

from nexusd.code.pointers import file_link

# Words that make a line chatter: it speaks of the report, its reader or its writer.
_META = frozenset(
    {
    "hi", "hello", "hey", "dear", "greetings", "team", "folks", "everyone", "guys",
    "maintainers", "thanks", "thank", "thx", "advance", "cheers", "regards", "appreciated",
    "please", "someone", "somebody", "anyone", "anybody", "you", "your", "claude", "codex",
    "copilot", "bug", "bugs", "issue", "issues", "problem", "problems", "question",
    "questions", "report", "reported", "trouble", "urgent", "regression", "fyi", "tl", "dr",
    "investigate", "locate", "below", "following", "described", "github", "gitlab", "idea",
    "ideas", "strange", "weird", "odd", "needed",
    }
)  # fmt: skip
# Words chatter is made of beside those: the small words of any sentence, and what a
# report asks for, which are also the names of features.
_FILLER = frozenset(
    {
    "a", "all", "an", "and", "any", "are", "as", "at", "be", "been", "can", "could", "d",
    "did", "do", "does", "doing", "for", "got", "had", "has", "have", "having", "here",
    "hope", "how", "i", "if", "in", "into", "is", "it", "just", "ll", "m", "me", "might",
    "my", "not", "of", "on", "or", "our", "re", "s", "so", "some", "sure", "t", "that", "the",
    "there", "think", "this", "to", "up", "us", "ve", "was", "we", "well", "what", "where",
    "why", "will", "with", "would",
    "address", "another", "behavior", "behaviour", "cause", "check", "closes", "debug",
    "describe", "description", "details", "duplicate", "encountered", "error", "errors",
    "expected", "find", "fix", "follow", "found", "getting", "given", "great", "happens",
    "help", "implement", "look", "minor", "need", "new", "overview", "possible", "potential",
    "quick", "ref", "related", "resolve", "responsible", "root", "see", "seeing", "small",
    "solve", "statement", "summary", "take", "task", "ticket", "title", "work",
    "screenshot", "screenshots", "image", "picture",
    }
)  # fmt: skip
# A plain line of one of these words is a rendered form's label, not a title.
_LABELS = frozenset({"summary", "description", "details", "overview", "title"})
_WORD = re.compile(r"\w+")
# Names written as code: in backticks, called, an option, dotted or joined words.
_CODE = re.compile(r"`|\w\(|(?<!\w)--?\w|[^\W\d][._-]\w|\w[._-][^\W\d]")
# Another issue: `#123`, a tracker's key (`PROJ-123`), a link to an issue or a page.
_ISSUE_REF = re.compile(r"(?<![\w&])#\d+\b|\b[A-Z][A-Z0-9]+-\d+\b")
_URL = re.compile(r"<?https?://[^\s<>()\[\]`'\"]+>?")
# A picture (a screenshot pasted first) shows the report; its words are not a title.
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)|<img\b[^>\n]*>", re.IGNORECASE)


def says_nothing(line: str) -> bool:
    """Whether `line` only says there is a report (chatter, issue numbers, links to issues,
    pictures) and is no title; one that names code, or a feature alone, is one."""
    line, pictures = _IMAGE.subn(" ", line)
    # `Bug: title not found` is about its second part; `Hi, I found a bug:` about its first.
    _head, colon, rest = line.partition(": ")
    if colon and _WORD.search(rest):
        line = rest
    if any(file_link(url) for url in _URL.findall(line)):
        return False
    refs = bool(pictures or _ISSUE_REF.search(line) or _URL.search(line))
    plain = _URL.sub(" ", _ISSUE_REF.sub(" ", line))
    if _CODE.search(plain):
        return False
    words = [w.lower() for w in _WORD.findall(plain)]
    if not words:
        return refs
    if len(words) == 1 and words[0] in _LABELS:
        return True
    known = all(w in _META or w in _FILLER or w.isdigit() for w in words)
    return known and (refs or any(w in _META for w in words))
