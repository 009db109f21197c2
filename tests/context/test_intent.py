"""The kind of a request: how real bug reports say what is wrong, and when a cue word is
the program's own name (the plan's steps follow the kind: tests/planner/test_sequence.py)."""

from __future__ import annotations

import pytest

from nexusd.context.intent import classify_text

_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.11/site-packages/sympy/matrices/blockmatrix.py", line 80, in f\n'
    "ValueError: bad blocks\n"
)


@pytest.mark.parametrize(
    "goal",
    [
        "The export produces an inconsistent CSV when a row has a comma",
        "Strange behaviour of `merge` with empty frames",
        "'AsStringVisitor' object has no attribute 'visit_unknown'",
        "Confusing assertion rewriting message with byte strings",
        "(-x/4 - S(1)/12)**x - 1 simplifies to an inequivalent expression",
        "Plot legend\n\n### Expected outcome\n\nThe legend is drawn.\n\n### Actual outcome\n\nNo.",
        "test_login is flaky on CI",
        "The daemon hangs when the socket is closed",
        "The worker leaks file descriptors after every request",
        # A pasted traceback outweighs what the prose asks (sympy-17630).
        f"Exception when multiplying\n\nI don't understand it; find out why.\n\n{_TRACEBACK}",
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
        # The work's own verb leads, or names code made of more words than the cue.
        ("Simplify the config loader without changing behaviour", "refactor"),
        ("Rename `load_rows` to `read_rows`", "refactor"),
        ("Rename `rename_file()` to `move_file()`", "refactor"),
        ("Split `split_lines()` into a tokenizer and a joiner", "refactor"),
        ("Document the `Documenter` class hierarchy for extension authors", "docs"),
        ("Write docs for the `docs_url` setting", "docs"),
        ("Explain what `explain()` prints for a join", "question"),
        ("`load()` is slow: every call takes `_slow_path()` on unicode input", "performance"),
        # An aside in parentheses is not a call; a web address and a prose file are not code.
        ("Make startup faster (it takes 3 s now)", "performance"),
        ("Explain (with file references) how the scheduler picks the next job", "question"),
        ("Update the docs to link to docs.python.org instead of the old wiki", "docs"),
        ("Fix the typo in README.md", "docs"),
        ("Fix typos in the help text of the plan command", "docs"),
        ("Update README.md with the new flags", "docs"),
        ("Make `parse()` faster: it takes 2 s on a 1 MB file", "performance"),
        # Words as often said of work to do as of a wrong result do not make a bug.
        ("Add a warning when the cache directory is full", "feature"),
        ("Emit a warning when the config file has unknown keys", "feature"),
        ("Dark mode for the dashboard. See issue #88", "feature"),
        ("JWT issuer validation for the auth middleware", "feature"),
        ("Cache invalidation on config change", "feature"),
        ("Warn users about stale lock files at startup", "feature"),
        ("Export the report as PDF. Expected result: a PDF with one page per module", "feature"),
        (
            "It should not be necessary to restart the server: reload the config on SIGHUP",
            "feature",
        ),
        ("Show a progress bar for incomplete downloads and let users resume them", "feature"),
        ("Document the known issues of the parser", "docs"),
        ("Explain why the invalid-token check exists in the lexer", "question"),
        ("Refactor the problem solver into smaller modules", "refactor"),
        ("Write a tutorial on handling bad input in forms", "docs"),
    ],
)
def test_work_other_than_a_bug_keeps_its_kind(goal: str, kind: str) -> None:
    assert classify_text(goal).kind == kind
