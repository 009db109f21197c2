from __future__ import annotations

import pytest

from nexusd.context.keywords import keywords


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Order lost on the overflow shelf", ("order", "lost", "overflow", "shelf")),
        ("Fix the flaky login test", ("flaky", "login")),
        ("the overflow_shelf is racy", ("overflow_shelf", "overflow", "shelf", "racy")),
        ("", ()),
        ("a an the of", ()),
        ("INTERNALERROR in __repr__ of _Private", ("internalerror", "repr", "private")),
    ],
)
def test_keywords_are_content_words_in_order(text: str, expected: tuple[str, ...]) -> None:
    assert keywords(text) == expected


def test_keywords_respects_limit_and_dedupes() -> None:
    words = keywords("alpha beta alpha gamma delta epsilon", limit=3)
    assert words == ("alpha", "beta", "gamma")
