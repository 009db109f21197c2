"""Where a report points at code: links to files, and the lines it names."""

from __future__ import annotations

import pytest

from nexusd.code.pointers import without_links
from nexusd.code.query import mine


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("The problem is in `jsonrep.py` at line 227. I plan a fix.", (("jsonrep.py", 227),)),
        (
            "See line 40 of src/pkg/io.py and line 7 in `util.py`.",
            (("src/pkg/io.py", 40), ("util.py", 7)),
        ),
        ("It fails at src/x.py:88 every time.", (("src/x.py", 88),)),
        ("jsonrep.py, line 12 is where it goes wrong", (("jsonrep.py", 12),)),
        # A traceback's frames are the frame signal's, not lines the prose points at.
        ('Traceback (most recent call last):\n  File "a/b.py", line 3, in f\nKeyError: 1', ()),
        ("It fails on line 3 of the example.", ()),
    ],
)
def test_lines_the_prose_points_at(text: str, lines: tuple[tuple[str, int], ...]) -> None:
    assert mine(text).lines == lines


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # A link to a repository's file is that file, and its line.
        (
            "see https://github.com/sharkdp/fd/blob/93cdb26/src/cli.rs#L513-L522.",
            "see  src/cli.rs at line 513 .",
        ),
        ("at https://gitlab.com/a/b/-/blob/main/lib/x.py here", "at  lib/x.py  here"),
        # Images, attachments and other issues name no code.
        ("![shot](https://user-images.githubusercontent.com/1/a-b.png)", "![shot]( )"),
        ("like https://github.com/pallets/flask/issues/4045 said", "like   said"),
        # Another page keeps its path's words and its anchor, not its host's.
        (
            "https://docs.python.org/3/library/typing.html#typing.Self",
            " 3 library typing.html#typing.Self ",
        ),
        ("no links here", "no links here"),
    ],
)
def test_links_become_the_code_they_name(text: str, said: str) -> None:
    assert without_links(text) == said


def test_a_link_to_a_file_points_at_its_line() -> None:
    query = mine("The alias lacks it: https://github.com/o/r/blob/abc1234/src/cli.rs#L513")
    assert (query.paths, query.lines, query.frames) == (("src/cli.rs",), (("src/cli.rs", 513),), ())
    assert not {"https", "github", "com", "abc1234"} & {word for word, _ in query.terms}


def test_a_line_of_an_installed_copy_is_the_reporters_release_not_ours() -> None:
    text = "/venv/lib/python3.9/site-packages/pylint/reporters/text.py:206: UserWarning: x"
    assert mine(text).lines == ()
