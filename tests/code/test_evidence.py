"""The evidence a request gives: how the reasons it leaves read."""

from __future__ import annotations

import pytest

from nexusd.code.evidence import _quoted


@pytest.mark.parametrize(
    ("piece", "shown"),
    [
        ("no quotes here", '"no quotes here"'),
        ('"--cert" must also be specified.', "'\"--cert\" must also be specified.'"),
        ("both \" and ' in it", "“both \" and ' in it”"),
    ],
)
def test_a_quoted_message_is_shown_in_quotes_it_does_not_contain(piece: str, shown: str) -> None:
    assert _quoted(piece) == shown
