"""The runnable Python a request shows: REPL lines, fenced blocks, inline calls."""

from __future__ import annotations

import pytest

from nexusd.code.snippet import MAX_STATEMENTS, free_names, runnable


@pytest.mark.parametrize(
    ("text", "prelude", "statements"),
    [
        (
            ">>> from pkg import f\n>>> f(1)\n3\n>>> for i in range(2):\n...     f(i)\n",
            ("from pkg import f",),
            ("f(1)", "for i in range(2):\n    f(i)"),
        ),
        (
            "In [1]: import pkg\n\nIn [2]: pkg.f(2)\nOut[2]: 4\n",
            ("import pkg",),
            ("pkg.f(2)",),
        ),
        (
            "Run this:\r\n```python\r\nimport pkg\r\nx = pkg.f(1)\r\nprint(x)\r\n```\r\n",
            ("import pkg",),
            ("x = pkg.f(1)", "print(x)"),
        ),
        # An unlabelled fence that parses as Python runs; its first line is not a label.
        ("```\nfrom pkg import *\nf(1)\n```\n", ("from pkg import *",), ("f(1)",)),
        ("> >>> f(1)\n> 2\n", (), ("f(1)",)),
        (
            '`latex(acsc(x), inv_trig_style="full")` gives `\\operatorname`',
            (),
            ('latex(acsc(x), inv_trig_style="full")',),
        ),
        ("`0**-oo` produces `0`", (), ("0**-oo",)),
        ("`x ** -y` and `a - -b` are code", (), ("x ** -y", "a - -b")),
    ],
)
def test_the_code_a_request_shows_is_found(
    text: str, prelude: tuple[str, ...], statements: tuple[str, ...]
) -> None:
    found = runnable(text)
    assert found.prelude == prelude
    assert found.statements == statements


@pytest.mark.parametrize(
    "text",
    [
        "Nothing to run here, only `pkg.f` and `sympy`.",
        "```bash\npip install pkg\nls -la\n```",
        "```yaml\nkey: value\n```",
        '```\nTraceback (most recent call last):\n  File "x.py", line 1\n```',
        "```python\ndef broken(:\n```",
        "`x`, `f`, `None`, `1`",
        # Command lines in prose parse as subtractions.
        "See `pytest --fixtures` and `ls -la`, or `git log -p`.",
    ],
)
def test_text_shell_and_broken_code_give_nothing(text: str) -> None:
    assert runnable(text).is_empty()


def test_a_flood_of_statements_is_cut() -> None:
    text = "\n".join(f">>> f({i})" for i in range(500))
    assert len(runnable(text).statements) == MAX_STATEMENTS


def test_the_same_statement_runs_once() -> None:
    text = "`f(1)` fails:\n```python\nf(1)\n```\n>>> f(1)\n"
    assert runnable(text).statements == ("f(1)",)


@pytest.mark.parametrize(
    ("text", "free"),
    [
        # `x` and `Permutation` come from off-screen; `y` is bound, `print` is a builtin.
        (">>> y = Permutation([1, 0])\n>>> print(y, x)\n", ("Permutation", "x")),
        # Imports, defs, their arguments, loop and comprehension targets bind.
        (
            ">>> from pkg import f as g\n>>> import a.b\n>>> def h(n):\n...     return n\n"
            ">>> for i in range(2):\n...     g(i) + h(i) + a.b.c\n>>> [k for k in q]\n",
            ("q",),
        ),
        (">>> class C:\n...     pass\n>>> C()\n", ()),
        # A lambda's or a comprehension's own names are bound inside it only.
        (
            ">>> f = lambda x: expand(x)\n>>> f(x)\n>>> [n for n in range(n)]\n",
            ("expand", "x", "n"),
        ),
        # A method reads the top level's `y`, not its class's.
        (">>> class D:\n...     y = 1\n...     def m(self):\n...         return y\n", ("y",)),
        ("`convert_to(joule*second, joule)`", ("convert_to", "joule", "second")),
    ],
)
def test_the_names_a_snippet_reads_but_never_binds(text: str, free: tuple[str, ...]) -> None:
    assert free_names(runnable(text)) == free


def test_code_nested_too_deep_for_the_parser_is_left_out() -> None:
    deep = ">>> " + "+".join(["x"] * 20_000) + "\n>>> f(1)\n"
    found = runnable(deep)
    assert found.statements == ("f(1)",)
    assert free_names(found) == ("f",)
