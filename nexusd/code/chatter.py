"""Lines that only say there is a report: not a title, whoever wrote them first.

A person or an agent often opens with a greeting, thanks, a plea or a task (`Bug report`,
`Hi team, can someone help?`, `Please fix the following issue.`, `Investigate the bug below
and find where it happens.`), an issue's number or its link; the report's title comes after.
Taken for the title, such a line made its words weigh four times and chose between the first
two files: with `Bug report` before every report, Acc@1 fell from 0.682 to 0.564 on the 110
(benchmarks/README.md, thirty-second session).

A line is chatter when it is short, all its words are such words, at least one of them says
so (`bug`, `please`, `someone`, `thanks`, `you`: a word of `_META`; or `#123`, a link to an
issue or a page, a picture, a prompt's `<issue>` tag, a closing colon that leads into what
follows: `Here is the error:`), and it names nothing as code does;
each part of a line split at `: ` must be so (`KeyError: 'title'` is an error, `Bug: title
not found` a title). Words that are also the names of features (`help`, `find`, `check`,
`task`, `address`, `team`) count only beside such a word: `Task not found`, `Fix help` and
`Check in` stay titles, as does anything in backticks, called, dotted or joined (`help()`,
`root.find`, `--check`, `bug-check`, `UTF-8`). Of 3,938 real titles a review ran through
it (the 433 reports, 3,000 of a public issue-classification set, 505 found by these very
words), those still skipped are chatter (`Found a bug`, `Please help !`) or name a feature
by a word of `_META` (`Fix address issue`, `Screenshot Issues`).
"""

from __future__ import annotations

import re

from nexusd.code.pointers import URL, file_link

# Words that make a line chatter: it speaks of the report, its reader or its writer.
_META = frozenset(
    {
    "hi", "hello", "hey", "dear", "greetings", "folks", "everyone", "guys", "maintainer",
    "maintainers", "thanks", "thank", "thx", "advance", "cheers", "regards", "appreciated",
    "sorry", "please", "someone", "somebody", "anyone", "anybody", "you", "your", "claude",
    "codex", "copilot", "bug", "bugs", "issue", "issues", "problem", "problems", "report",
    "reported", "trouble", "urgent", "fyi", "tl", "dr", "investigate", "locate", "below",
    "following", "described", "attached", "github", "gitlab", "suggestions", "instructions",
    "strange", "weird", "odd", "needed",
    }
)  # fmt: skip
# Words chatter is made of beside those: the small words of any sentence, and what a
# report asks for, which are also the names of features.
_FILLER = frozenset(
    {
    "a", "all", "an", "and", "any", "are", "as", "ask", "at", "be", "been", "can", "could",
    "d", "did", "do", "does", "doing", "first", "for", "from", "get", "got", "had", "has",
    "have", "having", "here", "hope", "how", "i", "if", "in", "into", "is", "it", "just",
    "known", "ll", "m", "me", "might", "my", "not", "of", "on", "or", "our", "place", "re",
    "right", "s", "so", "some", "sure", "t", "that", "the", "there", "think", "this", "to",
    "up", "us", "ve", "was", "we", "well", "what", "where", "why", "will", "with", "would",
    "address", "another", "behavior", "behaviour", "cause", "changes", "check", "closes",
    "debug", "describe", "description", "details", "duplicate", "encountered", "engineer",
    "error", "errors", "expected", "expert", "feature", "find", "fix", "fixed", "fixes",
    "follow", "found", "getting", "given", "great", "happens", "help", "idea", "ideas",
    "image", "implement", "library", "link", "look", "make", "minor", "need", "new",
    "overview", "picture", "possible", "potential", "project", "question", "questions",
    "quick", "ref", "refs", "related", "request", "resolve", "resolved", "resolves",
    "responsible", "root", "screenshot", "screenshots", "see", "seeing", "small",
    "software", "solve", "statement", "summary", "take", "task", "team", "ticket", "title",
    "update", "user", "work",
    }
)  # fmt: skip
# A plain line of one of these words is a rendered form's label or a prompt's heading.
_LABELS = frozenset(
    {
    "summary", "description", "details", "overview", "title", "screenshot", "screenshots",
    "task", "instructions", "question", "update",
    }
)  # fmt: skip
# Chatter is short; a longer line is read no further (and nothing below runs long).
_MAX_CHARS = 300
_WORD = re.compile(r"\w+")
# Names written as code: in backticks, called, an option, dotted or joined words (`UTF-8`).
_CODE = re.compile(r"`|\w\(|(?<!\w)--?\w|[^\W\d][._-]\w|\w[._-][^\W\d]")
# Another issue (`#123`) or a link; a picture, and a prompt's markup tag (`<issue>`).
_ISSUE_REF = re.compile(r"(?<![\w&])#\d+\b")
_LINK = re.compile(rf"<?{URL.pattern}>?")  # `<https://…>` whole
_MARKS = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)|<img\b[^>\n]*>|</?[A-Za-z_]+>", re.IGNORECASE)


def says_nothing(line: str) -> bool:
    """Whether `line` only says there is a report (chatter, issue numbers, links to issues,
    pictures) and is no title; one that names code, or a feature alone, is one."""
    if len(line) > _MAX_CHARS:
        return False
    line, marks = _MARKS.subn(" ", line)
    if any(file_link(url.strip("<>")) for url in _LINK.findall(line)):
        return False  # a link to a file names its code
    # Each part says nothing: `Bug: title not found` is about `title not found`, and
    # `KeyError: 'title'` about its error.
    parts = [part for part in _LINK.sub(" #0 ", line).split(": ") if _WORD.search(part)]
    # A line ending in a colon leads into what follows (`Here is the error:`).
    lead_in = line.rstrip().endswith(":")
    return bool(parts or marks) and all(_part_says_nothing(part, lead_in) for part in parts)


def _part_says_nothing(part: str, lead_in: bool) -> bool:
    refs = lead_in or _ISSUE_REF.search(part) is not None
    plain = _ISSUE_REF.sub(" ", part)
    if _CODE.search(plain):
        return False
    words = [w.lower() for w in _WORD.findall(plain)]
    if len(words) == 1 and words[0] in _LABELS:
        return True
    known = all(w in _META or w in _FILLER or w.isdigit() for w in words)
    return known and (refs or any(w in _META for w in words))


def without_opening(text: str) -> str:
    """`text` without the lines before its first that says something (`Bug report`, `Hi
    team,`…), when one does: their words are not the report's."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() and not says_nothing(line):
            return text if i == 0 else "\n" * i + "\n".join(lines[i:])
    return text
