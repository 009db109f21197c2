"""Operators of a request's code as words: the code implementing them is named so."""

from __future__ import annotations

import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.lang_python import parse_python
from nexusd.code.operators import operator_words
from nexusd.code.query import W_CODE, W_TITLE, mine
from nexusd.code.rank import rank


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("(-a)**x * a**(-x)", {"pow", "power", "mul"}),
        ("(-x/4 - S(1)/12)**x - 1", {"div", "pow", "power"}),
        ("x**-1", {"pow", "power"}),
        ("4*ceiling(x/4 - 3/4)", {"mul", "div"}),
        ("a*b*c", {"mul"}),  # operands are looked at, not used up
        ("M[0]*M[1]", {"mul"}),
        ("x % 2", {"mod"}),
        ("a  *  b", {"mul"}),
    ],
)
def test_arithmetic_gives_the_operations_words(code: str, words: set[str]) -> None:
    assert operator_words(code) == words


@pytest.mark.parametrize(
    "code",
    [
        "char *p = NULL; int **argv; Foo* bar;",  # declarations: spaced on one side only
        "see sympy/core/mul.py, ./run/it, https://example.org/a/b and lib/a/b/c",  # paths
        "and/or read/write sympify/simplify",  # prose alternatives
        "x //= 2; y *= 3; a//b; z %= 4",  # augmented assignments, floor division
        '"%s" % name; print("%-5s" % x)',  # formatting: no operand before the `%`
        "def f(*args, **kwargs): g(*args)",  # unpacking: no operand before
        "ls /-x; a/-b; 100%",  # no operand after
        "",
    ],
)
def test_what_is_not_arithmetic_gives_no_words(code: str) -> None:
    assert operator_words(code) == set()


def test_the_miner_weighs_them_as_code_and_more_in_the_title() -> None:
    q = mine("It prints:\n\n```\n>>> x**2\n```\n", title="Wrong product of a*b")
    terms = dict(q.terms)
    assert terms["pow"] == terms["power"] == W_CODE
    assert terms["mul"] == W_TITLE
    assert "div" not in terms
    # Prose operators are not code: "3 * 4 apples" in a sentence gives nothing.
    assert "mul" not in dict(mine("I have 3 * 4 apples and it breaks").terms)


def test_a_power_in_the_snippet_finds_the_code_implementing_powers() -> None:
    files = {
        "core/power.py": "class Pow:\n    def _eval_power(self, other):\n        return other\n",
        "core/add.py": "class Add:\n    def _eval_subs(self, old, new):\n        return new\n",
        "core/printing.py": "def show(expr):\n    return str(expr)\n",
    }
    corpus = Corpus([parse_python(path, text) for path, text in files.items()])
    request = "Wrong result:\n\n```\n>>> show(x**2)\n```\n"
    hits = {h.path: h for h in rank(corpus, mine(request), k=3)}
    assert "core/power.py" in hits and "core/add.py" not in hits
    assert any("`power`" in reason for reason in hits["core/power.py"].reasons)
    without = rank(corpus, mine("Wrong result:\n\n```\n>>> show(x)\n```\n"), k=3)
    assert "core/power.py" not in [h.path for h in without]


@pytest.mark.parametrize(
    "code",
    [
        'File "/home/me/envs/py38/lib/python3.8/site-packages/x/y.py", line 3, in f',
        "  File ~/miniconda/envs/py310/lib/python3.10/site-packages/m.py:12, in g",
        "    at diff (/home/circleci/project/node_modules/dayjs/plugin/utc.js:1:1941)",
        "#include <catch2/catch.hpp>",
        "WindowsPath('C:/Users/john_doe/AppData/Local/Temp')",
        "Unable to load file a/__init__.py: No such file",
        'd = "2021/01/02"',
        "curl 'http://h/a%2Fb' -d 'q=hello%20world'",
    ],
)
def test_paths_quoted_or_bracketed_and_encodings_give_no_words(code: str) -> None:
    assert operator_words(code) == set()


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("y = x/np.pi", {"div"}),  # an attribute is no file extension
        ("r = a/self.scale", {"div"}),
        ("return x * -1", {"mul"}),  # spaced alike, a negative operand
        ("i%10 == 0", {"mod"}),
    ],
)
def test_arithmetic_the_path_rules_must_not_eat(code: str, words: set[str]) -> None:
    assert operator_words(code) == words


@pytest.mark.parametrize(
    "title",
    [
        "Drop Python 3.8/3.9 support",
        "I/O error when reading n/a values",
        "1/2 of the tests fail on x86_64/arm64",
        "Parsing with Unix Timestamp tokens X/x and strict mode results in Invalid Date",
        "HTTP/2 connections hang",
    ],
)
def test_a_titles_prose_slash_is_no_division(title: str) -> None:
    assert "div" not in operator_words(title, prose=True)


@pytest.mark.parametrize(
    "title", ["(-x/4 - S(1)/12)**x - 1 simplifies wrongly", "inaccurate rendering of pi**(1/E)"]
)
def test_a_titles_expression_still_divides(title: str) -> None:
    assert "div" in operator_words(title, prose=True)


def test_a_titles_slash_weighs_as_the_title_only_inside_an_expression() -> None:
    assert "div" not in dict(mine("body", title="Python 3.8/3.9 and I/O").terms)
    assert dict(mine("body", title="(-x/4 - S(1)/12)**x - 1 is wrong").terms)["div"] == W_TITLE
