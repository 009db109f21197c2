"""Inline code that stays inline code whatever it holds: CommonMark's rule for code spans."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from nexusd.protocol.inline import inline_code

_MD = MarkdownIt("commonmark")


def _spans(markdown: str) -> list[str]:
    """The code spans of one paragraph, as a CommonMark renderer reads them."""
    tokens = _MD.parseInline(markdown)
    return [t.content for t in tokens[0].children or [] if t.type == "code_inline"]


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("src/app.py", "`src/app.py`"),
        ("src/we`ird.py", "``src/we`ird.py``"),
        ("a``b", "```a``b```"),
        ("`start.py", "`` `start.py ``"),
        ("end.py`", "`` end.py` ``"),
        ("``", "``` `` ```"),
        (" padded ", "`  padded  `"),  # CommonMark strips one space from each side
        ("", "` `"),  # an empty span would be two literal backticks
    ],
)
def test_the_fence_is_longer_than_any_run_inside(text: str, written: str) -> None:
    assert inline_code(text) == written


@given(st.text(alphabet=st.sampled_from("ab` _/.:-*|"), min_size=1, max_size=30))
def test_any_text_reads_back_as_one_code_span(text: str) -> None:
    said = f"see {inline_code(text)} here"
    assert _spans(said) == [text]
