"""Code-aware tokens: identifiers kept whole and split on snake_case, camelCase and dots."""

from __future__ import annotations

import pytest

from nexusd.code.lexical import decode
from nexusd.code.tokens import (
    pack_counts,
    path_tokens,
    split_identifier,
    token_counts,
    tokens,
)


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("parse_expr", ["parse", "expr"]),
        ("_print_Pow", ["print", "pow"]),
        ("LatexPrinter", ["latex", "printer"]),
        ("camelCase", ["camel", "case"]),
        ("HTTPServer2", ["http", "server", "2"]),
        ("plain", ["plain"]),
        # Names in any script split the same way (they were cut at the first non-ASCII letter).
        ("café_name", ["café", "name"]),
        ("ПарсерДанных2", ["парсер", "данных", "2"]),
        ("naïveBAYESModel", ["naïve", "bayes", "model"]),
        # A number with a letter is a dimension: one part...
        ("axes3d", ["axes", "3d"]),
        ("Axes3DSubplot", ["axes", "3d", "subplot"]),
        ("Line2D", ["line", "2d"]),
        # ...unless the letter begins a word that goes on after it.
        ("qt5agg", ["qt", "5", "agg"]),
        ("web3js", ["web", "3", "js"]),
        ("base64encode", ["base", "64", "encode"]),
        ("PBKDF2SHA1Hasher", ["pbkdf", "2", "sha", "1", "hasher"]),
        ("HTTP2SERVER", ["http", "2", "server"]),
        ("d5a80", ["d", "5", "a", "80"]),
    ],
)
def test_split_identifier(word: str, parts: list[str]) -> None:
    assert split_identifier(word) == parts


def test_tokens_keep_the_whole_identifier_and_its_parts() -> None:
    # `print` is a stop word: every program and report prints.
    assert tokens("LatexPrinter._print_Pow(x)") == [
        "latexprinter",
        "latex",
        "printer",
        "_print_pow",
        "pow",
    ]
    assert tokens("__slots__ _pytest") == ["__slots__", "slots", "_pytest", "pytest"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("set_visible() does nothing on a 3d projection", True),
        ("subplot_kw={'projection': '3D'}", True),
        ("from mpl_toolkits.mplot3d import Axes3D", True),
        ("open 3d_utils", True),
        ("请修复3d投影", True),  # CJK characters separate words
        # A version's or a number's tail is no dimension, nor is a name's part counted twice.
        ("since v1.3d and 1.3d and 1e3", False),
        ("3dé ²3d 10px", False),
    ],
)
def test_a_number_with_a_letter_is_a_word_where_it_stands(text: str, found: bool) -> None:
    # Identifiers start at a letter: `3d` on its own was only `d`, and dropped.
    assert ("3d" in tokens(text)) is found
    # A name's part is not counted a second time as a word of its own.
    assert tokens("axes3d x3d").count("3d") == 2
    assert token_counts(text) == __import__("collections").Counter(tokens(text))


def test_stop_words_and_single_letters_are_dropped() -> None:
    assert tokens("the value of x is None") == []


def test_token_counts_equal_counting_tokens() -> None:
    text = "def parse_expr(s): return parse_expr(s) + parseExpr"
    counts = token_counts(text)
    assert counts["parse_expr"] == 2
    assert counts["parse"] == 3
    assert counts == __import__("collections").Counter(tokens(text))


def test_path_tokens() -> None:
    assert path_tokens("sympy/printing/latex.py") == ["sympy", "printing", "latex"]
    assert path_tokens("src/_pytest/assertion/rewrite.py") == [
        "src",
        "_pytest",
        "pytest",
        "assertion",
        "rewrite",
    ]
    assert "3d" in path_tokens("lib/mpl_toolkits/mplot3d/axes3d.py")


def test_packed_counts_decode_to_the_same_counts() -> None:
    counts = token_counts("parse_expr(parse_expr, x) # latexPrinter parse")
    packed = pack_counts(counts)
    vocab: dict[str, int] = {"x": 0}
    ids, tfs = decode(packed, vocab)
    words = {i: w for w, i in vocab.items()}
    assert {words[int(i)]: int(n) for i, n in zip(ids, tfs, strict=True)} == counts
    assert "parse:3" in packed.split() and vocab["x"] == 0  # known words keep their id
    assert [len(a) for a in decode(pack_counts({}), vocab)] == [0, 0]


def test_identifiers_in_an_alphabet_are_whole_words() -> None:
    assert tokens("café_name = данные_load(x)") == [
        *("café_name", "café", "данные_load", "данные", "load")
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("请修复parse_config函数的crash", ["parse_config", "parse", "config", "crash"]),
        ("parse_configを呼ぶとcrashが出る", ["parse_config", "parse", "config", "crash"]),
        ("parse_config의 crash", ["parse_config", "parse", "config", "crash"]),
        (
            "ｃｒａｓｈ：parse_config",
            ["parse_config", "parse", "config"],
        ),  # full-width: typed beside
    ],
)
def test_cjk_prose_separates_the_names_it_mentions(text: str, words: list[str]) -> None:
    assert tokens(text) == words
