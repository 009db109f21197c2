"""The kind of a request: how real bug reports say what is wrong without the words of a
bug, and requests of other kinds that use those words (the plan's steps follow the kind:
tests/planner/test_sequence.py; figures: benchmarks/request_kinds.py)."""

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
        "`test_upload` flakes on CI about one run in twenty",
        "The flakiness of `test_retry` makes CI red every other day",
        "The daemon hangs when the socket is closed",
        "The worker leaks file descriptors after every request",
        "Worker process leaking file descriptors after each job",
        # A pasted traceback outweighs what the prose asks (sympy-17630).
        f"Exception when multiplying\n\nI don't understand it; find out why.\n\n{_TRACEBACK}",
    ],
)
def test_a_report_of_a_wrong_result_is_a_bug(goal: str) -> None:
    assert classify_text(goal).kind == "bug"


@pytest.mark.parametrize(
    "goal",
    [
        # What happens beside what should: a wrong result, however few bug words it has.
        "GET /users returns 500, should return 404",
        "`round(2.5)` gives 2 but should give 3",
        "The total is 10 but it should be 12",
        "The total is 10, should be 12",
        "`GET /users/7` returns 500 when it should return 404",
        "`parse('1.0')` should return a float but returns a string",
        "Expected 3, got 4 from `add(1, 2)`",
        "Expected the new token after a refresh but got the old one",
        "Adding an item to the cart\n\nExpected: 3 items\nGot: 2 items",
        "The new export option returns 1 instead of 0",
    ],
)
def test_a_request_saying_what_happens_and_what_should_is_a_bug(goal: str) -> None:
    assert classify_text(goal).kind == "bug"


@pytest.mark.parametrize(
    ("goal", "kind"),
    [
        # Other work that says what something should do, or names an `instead of`.
        ("Add a `--json` flag so the CLI prints JSON instead of a table", "feature"),
        ("Add an option so that `load()` should return a dict instead of a list", "feature"),
        ("Support `expected` and `got` fields in the JSON test report", "feature"),
        ("Add an endpoint that returns 404 for unknown users; it should return JSON", "feature"),
        ("The dashboard is a new page, it should be usable on phones", "feature"),
        ("Find outliers in the sales data and add an alert", "feature"),
    ],
)
def test_saying_what_should_happen_is_not_a_bug_by_itself(goal: str, kind: str) -> None:
    assert classify_text(goal).kind == kind


@pytest.mark.parametrize(
    ("goal", "kind"),
    [
        # A verb in a clause of work to do (`so …`, `that …`) says what the work makes
        # happen, not a wrong result, whatever follows it.
        ("Add a `--csv` switch so export prints CSV instead of JSON", "feature"),
        ("Add a config key so the default timezone is UTC instead of local time", "feature"),
        (
            "Add caching so repeated lookups are served from memory instead of the database",
            "feature",
        ),
        (
            "Add a /users endpoint that returns JSON, it should return 404 for unknown ids",
            "feature",
        ),
        (
            "Extend the report so it shows the failures, it should show the slowest tests too",
            "feature",
        ),
        # A wish, and a cue of other work as strong as the `is …, should be …` of a report.
        ("The CLI is fine, but it should be possible to pass a config file", "feature"),
        ("Add a setting: the default is 10 but it should be configurable", "feature"),
        ("The function is fine but should be documented", "docs"),
        # `see` pointing elsewhere after what a request expects.
        ("Add support for the expected schema version, see RFC 9110", "feature"),
    ],
)
def test_a_clause_of_work_to_do_is_no_wrong_result(goal: str, kind: str) -> None:
    assert classify_text(goal).kind == kind


@pytest.mark.parametrize(
    "goal",
    [
        "`len(x)` returns 3, should return 4",
        "I set the flag so the cache is skipped, but `get()` returns 3, should return 4",
        "I expected 3 but I see 4 in the report",
        "The total is 10 but it should be 12",
    ],
)
def test_a_wrong_result_beside_a_clause_of_work_is_still_a_bug(goal: str) -> None:
    assert classify_text(goal).kind == "bug"


@pytest.mark.parametrize(
    ("goal", "kind"),
    [
        # A cue's last short word is whole, but its plural is the same word.
        ("Startup times went from 0.5 s to 3 s after 2.0", "performance"),
        ("Remove the dead codes paths left by the old importer", "refactor"),
        # `does not` is whole now, and `does nothing` says a bug of its own.
        ("The button does nothing after the first click", "bug"),
    ],
)
def test_a_cue_ending_in_a_short_word_still_reads_its_usual_forms(goal: str, kind: str) -> None:
    assert classify_text(goal).kind == kind


@pytest.mark.parametrize(
    ("goal", "kind"),
    [
        ("Simplify the config loader without changing behaviour", "refactor"),
        ("Rename `load_rows` to `read_rows`", "refactor"),
        ("Explain what `explain()` prints for a join", "question"),
        ("Make startup faster (it takes 3 s now)", "performance"),
        ("The `benchmark` suite shows `parse()` is 3x slower than in 1.x", "performance"),
        ("Update the docs to link to docs.python.org instead of the old wiki", "docs"),
        ("Add a section to the `README` explaining how to configure the watch paths", "docs"),
        ("Fix the typo in README.md", "docs"),
        ("Fix typos in error messages shown by the CLI", "docs"),
        ("Update README.md with the new flags", "docs"),
        # A traceback pasted to show where the time goes does not outweigh "slow".
        (
            f"Importing the package is slow (4 s). Ctrl-C shows where:\n```\n{_TRACEBACK}```",
            "performance",
        ),
        # Words as often said of work to do as of a wrong result do not make a bug.
        ("Add a warning when the cache directory is full", "feature"),
        ("Emit a warning when the config file has unknown keys", "feature"),
        ("Dark mode for the dashboard. See issue #88", "feature"),
        ("JWT issuer validation for the auth middleware", "feature"),
        ("Cache invalidation on config change", "feature"),
        ("Validate the config on load and report invalid keys", "feature"),
        ("Add retries for flaky network calls in the uploader", "feature"),
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


@pytest.mark.parametrize(
    "trace",
    [
        "java.lang.ClassCastException: x\n\tat org.dubbo.ReflectUtils.types(ReflectUtils.java:12)",
        'Exception in thread "main" java.lang.IllegalStateException',
        "panic: send on closed channel\n\ngoroutine 7 [running]:\nmain.run()",
        "thread 'main' panicked at src/main.rs:3:5:\nindex out of bounds",
        "    at Layer.handle [as handle_request] (/app/lib/router/layer.js:95:5)",
    ],
)
def test_another_runtimes_trace_marks_a_bug(trace: str) -> None:
    # The prose alone asks for nothing in particular: the trace says something broke.
    intent = classify_text(f"ReflectUtils with generic return types\n\n```\n{trace}\n```\n")
    assert intent.kind == "bug"
