"""The goal as a plan shows it: a title and a bounded summary of a pasted report."""

from __future__ import annotations

import pytest

from nexusd.context.goaltext import goal_summary, goal_title, split_goal


@pytest.mark.parametrize(
    ("goal", "title"),
    [
        # An issue pasted whole: its title line, then the report.
        (
            "Mod(x**2, x) is not (always) 0\nWhen the base is not an integer, it is not 0.",
            "Mod(x**2, x) is not (always) 0",
        ),
        (
            "INTERNALERROR when exception in __repr__\nMinimal code to reproduce the issue:\n",
            "INTERNALERROR when exception in __repr__",
        ),
        ("viewcode makes epub pages\n**Describe the bug**\nIt does.", "viewcode makes epub pages"),
        (
            "Optional URL params crash some view functions.\nDescription\nIt crashes.",
            "Optional URL params crash some view functions.",
        ),
        (
            ".subs on coth(log(tan(x))) errors\n>>> from sympy import *\n",
            ".subs on coth(log(tan(x))) errors",
        ),
        # One sentence wrapped over two lines is one title.
        (
            "Fix the crash in click.prompt when the\ndefault is None",
            "Fix the crash in click.prompt when the default is None",
        ),
        (
            "Make the parser faster for large inputs,\nEspecially JSON ones",
            "Make the parser faster for large inputs, Especially JSON ones",
        ),
        ("# Add a file-size option type\n\nAdd a `FileSize` type.", "Add a file-size option type"),
    ],
)
def test_the_title_is_the_first_line_of_a_pasted_issue(goal: str, title: str) -> None:
    assert goal_title(goal) == title


def test_a_long_first_line_is_not_taken_for_a_title() -> None:
    first = " ".join(["word"] * 30)
    assert split_goal(first + "\nThen more.").prose == (first + " Then more.",)


def test_the_summary_leaves_out_the_words_that_only_joined_code_blocks() -> None:
    goal = (
        "Mod(x**2, x) is not (always) 0\nThe base is not tested in Mod's eval logic:\n"
        "```\nif p == q: return S.Zero\n```\nso\n```\n>>> Mod(x**2, x)\n0\n```\nbut\n"
        "```\n>>> Mod(1.5**2, 1.5)\n0.75\n```\n"
    )
    assert goal_summary(goal) == (
        "Mod(x**2, x) is not (always) 0. The base is not tested in Mod's eval logic: "
        "_(3 code block(s), 5 line(s), not repeated here)_"
    )
    # Without code blocks a short paragraph is what the writer said.
    assert goal_summary("Cache the lookups\n\nPlease.") == "Cache the lookups. Please."
