"""Lines that only say there is a report, and real titles that look like them."""

from __future__ import annotations

import pytest

from nexusd.code.chatter import says_nothing, without_opening


@pytest.mark.parametrize(
    "line",
    [
        # What people write before a report.
        "Bug report",
        "Is this a bug?",
        "Hi team, can someone help?",
        "Please fix the following issue.",
        "Hi, I found a bug:",
        "Thanks in advance!",
        "Any help appreciated",
        "Not sure if this is a bug or expected behavior",
        "I'm getting the following error:",
        "Here is the error:",  # a lead-in to what follows
        "Hi team, hope you're doing well.",
        "TL;DR",
        # What agents are told, or tell each other, before one.
        "Investigate the bug below and find where it happens.",
        "Resolve the following GitHub issue:",
        "Can you take a look at this?",
        "Your task is to fix the following issue",
        "You are given a GitHub issue. Fix it.",
        "@claude please fix",
        "Problem statement:",
        # Another issue, by number or link, a rendered form's plain label, a prompt's tag.
        "Issue #123 (2.0)",
        "Related to #123",
        "https://github.com/org/net/issues/123",
        "Issue link: https://gitlab.com/group/net/-/issues/12",
        "<https://bugs.python.org/issue12345>",
        "Summary",
        "<issue>",
        "## Task",
        # A picture pasted first.
        "![image](https://user-images.githubusercontent.com/1/2.png)",
        '<img width="500" alt="Screenshot 2024-01-01" src="https://github.com/user-attachments/assets/a">',
        "Screenshot: ![Screenshot 2024-01-01 at 10 00 00](https://example.com/s.png)",
    ],
)
def test_a_line_that_only_says_there_is_a_report_says_nothing(line: str) -> None:
    assert says_nothing(line)


@pytest.mark.parametrize(
    "line",
    [
        "KeyError on retry",
        "Bug: KeyError on retry",
        "Hi team, fetch retries forever",
        "UTF-8 truncation",
        "UTF-8",
        "PEP-8",
        # An error's text, or a part of the title that names something.
        "KeyError: 'title'",
        "Crash: Regression",
        "Memory leak in parser: see #1234",
        "`foo()` crashes: https://godbolt.org/z/x",
        "Regression",
        "Team not found",
        "Question could not be found",
        # Real titles in words chatter is made of: a feature alone is named by them.
        "Task not found",
        "Fix help",
        "Check in",
        "Find a title",
        "Can't resolve",
        "404 Not Found",
        "bug: title Not Found",
        "Log the traceback",
        "Request context",
        # A name written as code.
        "bug-check",
        "`help` not found",
        "help()",
        "Bug in `resolve()`",
        "--help",
        "root.find() issue",
        "error_log",
        # A link to a file names its code.
        "https://github.com/org/net/blob/main/net/client.py#L5",
        "<https://github.com/org/net/blob/main/net/client.py#L5>",
        "https://git.example.com/org/net/src/branch/main/net/client.py",
        "Image not shown: ![x](https://example.com/x.png)",
    ],
)
def test_a_title_in_such_words_says_something(line: str) -> None:
    assert not says_nothing(line)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bug report\n\nKeyError on retry\nbody", "\n\nKeyError on retry\nbody"),
        ("KeyError on retry\nBug report", "KeyError on retry\nBug report"),
        ("Bug report\nThanks!", "Bug report\nThanks!"),  # all of it: nothing else to search
    ],
)
def test_the_opening_chatter_goes_and_the_lines_stay(text: str, expected: str) -> None:
    assert without_opening(text) == expected
