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


@pytest.mark.parametrize(
    ("goal", "summary"),
    [
        # A template's section heading leads into its section; an empty one goes (an issue
        # form's `_No response_` is no answer).
        (
            "Unrecognized option prints a traceback\n### Bug description\nA traceback.\n"
            "### Expected behavior\nA usage tip.\n### OS / Environment\n_No response_\n"
            "### Additional dependencies\n",
            "Unrecognized option prints a traceback. Bug description: A traceback. "
            "Expected behavior: A usage tip.",
        ),
        # Issue forms' bold section titles are headings too.
        (
            "from_json loses URIs\n**Describe the bug**\nThe URIs stay.\n",
            "from_json loses URIs. Describe the bug: The URIs stay.",
        ),
        # A colon that led into a code block not repeated here ends its sentence.
        (
            "TOML fails\nIt gives this error:\n\n```\nTypeError\n```\n\nWe can work round it.",
            "TOML fails. It gives this error. We can work round it. "
            "_(1 code block(s), 1 line(s), not repeated here)_",
        ),
        # An environment report and a collapsed block's label are no prose.
        (
            "Unstack fails\n\n<details><summary>Output of <tt>xr.show_versions()</tt></summary>\n\n"
            "INSTALLED VERSIONS\n------------------\ncommit: None\nmachine: x86_64\n\n</details>\n",
            "Unstack fails.",
        ),
    ],
)
def test_the_summary_reads_as_prose(goal: str, summary: str) -> None:
    assert goal_summary(goal) == summary


CODE_ONLY = "```python\ndef get_users():\n    return 500\n```\n"


@pytest.mark.parametrize(
    ("goal", "title", "summary"),
    [
        # Only code: the goal says so and names the code by its first line.
        (
            CODE_ONLY,
            "Python code without a description: `def get_users():`",
            "The request gives only Python code, no description of what to do with it; "
            "it starts `def get_users():`. _(1 code block(s), 2 line(s), not repeated here)_",
        ),
        (
            "\n~~~\n\nx = `date`\n~~~\n",
            "Code without a description: `` x = `date` ``",
            "The request gives only code, no description of what to do with it; "
            "it starts `` x = `date` ``. _(1 code block(s), 2 line(s), not repeated here)_",
        ),
        (
            "```\n```\n",
            "An empty code block without a description",
            "The request gives only an empty code block, no description of what to do. "
            "_(1 code block(s), 0 line(s), not repeated here)_",
        ),
    ],
)
def test_a_goal_of_only_code_still_says_what_the_request_gave(
    goal: str, title: str, summary: str
) -> None:
    assert goal_title(goal) == title
    assert goal_summary(goal) == summary
