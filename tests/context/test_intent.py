"""The kind of a request: how real bug reports say what is wrong, and when a cue word is
the program's own name (the plan's steps follow the kind: tests/planner/test_sequence.py)."""

from __future__ import annotations

import pytest

from nexusd.context.intent import classify_text


@pytest.mark.parametrize(
    "goal",
    [
        "The export produces an inconsistent CSV when a row has a comma",
        "Sorting by date gives an incomplete list after the second page",
        "Strange behaviour of `merge` with empty frames",
        "'AsStringVisitor' object has no attribute 'visit_unknown'",
        "Confusing assertion rewriting message with byte strings",
        "(-x/4 - S(1)/12)**x - 1 simplifies to an inequivalent expression",
        "Plot legend\n\n### Expected outcome\n\nThe legend is drawn.\n\n### Actual outcome\n\nNo.",
    ],
)
def test_a_report_of_a_wrong_result_is_a_bug(goal: str) -> None:
    assert classify_text(goal).kind == "bug"


@pytest.mark.parametrize(
    ("goal", "cue"),
    [
        # The report calls the function its prose names: sympy's `simplify`, not a refactor.
        ("Inconsistency when simplifying\n\n```python\n>>> simplify(e)\n0\n```", "simplif"),
        ("`expr.rewrite(cos)` drops the sign", "rewrite"),
        ("The optimizer loses an AlterField\n\n`MigrationOptimizer().optimize(ops)`", "optimi"),
    ],
)
def test_a_cue_the_report_uses_as_code_is_not_the_kind_of_work(goal: str, cue: str) -> None:
    intent = classify_text(goal)
    assert cue not in intent.cues
    assert intent.kind in ("bug", "feature")


@pytest.mark.parametrize(
    ("goal", "kind"),
    [
        # The same words as the work itself, and files of prose named, still decide it.
        ("Simplify the config loader without changing behaviour", "refactor"),
        ("Rename `load_rows` to `read_rows`", "refactor"),
        ("Fix the typo in README.md", "docs"),
        ("Update README.md with the new flags", "docs"),
        ("Document `Config.from_file` in docs/api.rst", "docs"),
        ("Make `parse()` faster: it takes 2 s on a 1 MB file", "performance"),
        # The new bug cues do not outweigh what a request asks for.
        ("Add a warning when the cache directory is full", "feature"),
        ("Allow users to mark an issue as a duplicate", "feature"),
        ("Document the known issues of the parser", "docs"),
        ("Explain why the invalid-token check exists in the lexer", "question"),
        ("Refactor the problem solver into smaller modules", "refactor"),
        ("Write a tutorial on handling bad input in forms", "docs"),
    ],
)
def test_work_other_than_a_bug_keeps_its_kind(goal: str, kind: str) -> None:
    assert classify_text(goal).kind == kind
