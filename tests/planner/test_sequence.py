"""Plans fit the kind of request: which steps appear, which never do, and in what order."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nexusd.code.rank import FileHit, UnitHit
from nexusd.config import config_from_mapping
from nexusd.context.intent import classify_text
from nexusd.context.relevant_code import code_phase
from nexusd.paths import find_repo
from nexusd.planner.actions import Action
from nexusd.planner.sequence import plan_actions
from tests.code.conftest import CORE, UTIL, write
from tests.conftest import git
from tests.plan_helpers import bundle_for, kitchen_repo, request


@pytest.mark.parametrize(
    ("goal", "kind"),
    [
        ("Fix the crash in click.prompt when the default is None", "bug"),
        ("Find and fix the lost-order race on the overflow shelf", "bug"),
        ("Invoice totals are off by one cent for large invoices", "bug"),
        ("Config.from_file fails on TOML files opened in text mode", "bug"),
        ("The login test is failing since Tuesday", "bug"),
        ("TypeError in send_file with a pathlib.Path", "bug"),
        ("Add a custom ValidationError class and raise it for empty names", "feature"),
        ("Create a RateLimitError and map HTTP 429 to it in the client", "feature"),
        ("Write docs for the TimeoutError handling", "docs"),
        ("# Add a file-size option type\n\nAdd a `FileSize` type parsed into bytes.", "feature"),
        ("Add a --strict flag that fails on unknown options", "feature"),
        ("Support Windows paths in the config loader", "feature"),
        ("Refactor the parser into smaller functions without changing behaviour", "refactor"),
        ("Rename Shelf.place to Shelf.put", "refactor"),
        ("Document the prompt() function in the README", "docs"),
        ("Fix the typo in the README", "docs"),
        ("Make `click --help` start faster: it takes 400 ms", "performance"),
        ("Fix the slow startup of the CLI", "performance"),
        ("Why does the overflow shelf lose an order under contention?", "question"),
        ("How should we structure the plugin registry?", "question"),
        ("The importer drops the last row on Windows?", "question"),
        # An issue's title ending in `?` above the report: the report says what it is.
        (
            "can't simplify sin/cos with Rational?\n\nThe result is wrong: it gives 0.",
            "bug",
        ),
    ],
)
def test_requests_are_classified_by_the_work_they_ask_for(goal: str, kind: str) -> None:
    assert classify_text(goal).kind == kind


def _plan(repo: Path, goal: str, **overrides: object) -> tuple[Action, ...]:
    kitchen_repo(repo)
    values: dict[str, object] = {"goal": goal, "blockers": (), "questions": request().questions}
    values.update(overrides)
    return plan_actions(bundle_for(repo, request(**values)), 8)


def _steps(actions: tuple[Action, ...]) -> list[str]:
    return [a.step for a in actions]


def _before(actions: tuple[Action, ...], first: str, then: str) -> bool:
    steps = _steps(actions)
    return max(i for i, s in enumerate(steps) if s == first) < min(
        i for i, s in enumerate(steps) if s == then
    )


def test_a_feature_is_specified_and_built_never_diagnosed(repo: Path) -> None:
    # "fails" and "error" match the catalog's error-handling practice, whose diagnostic is
    # "capture the full traceback": right for a crash, wrong for a feature.
    actions = _plan(repo, "Add a --strict option that fails with an error on unknown shelves")
    assert "diagnose" not in _steps(actions)
    assert not any("traceback" in f"{a.title} {a.how}".lower() for a in actions)
    assert _before(actions, "test", "change")  # the test specifies, then the change builds
    assert "document" in _steps(actions)
    assert _steps(actions)[0] == "review" and _steps(actions)[-1] == "checks"


def test_a_bug_is_reproduced_and_diagnosed_before_it_is_fixed(repo: Path) -> None:
    actions = _plan(repo, "Fix the crash: placing an order raises an exception on the shelf")
    steps = _steps(actions)
    assert "diagnose" in steps and "test" in steps
    assert _before(actions, "diagnose", "change") and _before(actions, "test", "change")
    # The step says what to do; the practice it comes from is named as its reason.
    diagnose = next(a for a in actions if a.step == "diagnose")
    assert diagnose.title == "Narrow down the cause"
    assert diagnose.how.endswith(
        "(the practice “Fail loudly with a message that says how to fix it”)"
    )


def test_a_practice_whose_diagnostic_is_the_failing_test_does_not_repeat_that_step(
    repo: Path,
) -> None:
    # "wrong" chooses the reproduce-first practice, whose diagnostic is a failing test: the
    # plan's own test step already asks for it.
    goal = "The order count shown on the shelf is wrong after a refund"
    actions = _plan(repo, goal, previous_goal=None, previous_outcome=None)
    assert "test" in _steps(actions)
    assert not any("reproduce before fixing" in a.title.lower() for a in actions)
    openings = [tuple(a.how.lower().split()[:4]) for a in actions]
    assert len(openings) == len(set(openings))


def test_a_refactor_keeps_the_tests_green_instead_of_writing_a_failing_one(repo: Path) -> None:
    actions = _plan(repo, "Refactor the shelves module into smaller classes")
    test = next(a for a in actions if a.step == "test")
    assert _before(actions, "test", "change")
    assert "fail" not in f"{test.how} {test.verify}".lower()
    assert "diagnose" not in _steps(actions)


def test_a_performance_goal_is_measured_before_and_after(repo: Path) -> None:
    actions = _plan(repo, "Make placing orders on the shelves faster")
    steps = _steps(actions)
    changes = [i for i, s in enumerate(steps) if s == "change"]
    measures = [i for i, s in enumerate(steps) if s == "measure"]
    assert measures and changes
    assert min(measures) < min(changes) and max(measures) > max(changes)
    assert "test" not in steps  # no test asserting wall-clock times


def test_a_question_is_answered_without_changing_code(repo: Path) -> None:
    actions = _plan(repo, "Why does the overflow shelf lose an order under contention?")
    steps = _steps(actions)
    assert not {"change", "create", "test", "diagnose"} & set(steps)
    assert steps[-1] == "answer"


def test_docs_are_written_and_their_examples_run(repo: Path) -> None:
    actions = _plan(repo, "Document how shelves and couriers work in the README")
    steps = _steps(actions)
    assert "diagnose" not in steps
    assert _before(actions, "change", "test")  # examples are checked after they are written


@pytest.mark.parametrize(
    "goal",
    [
        "Fix the crash when placing an order",
        "Add an express shelf",
        "Refactor the shelves module",
        "Make shelf placement faster",
        "Document the courier",
        "Where is the overflow shelf drained?",
    ],
)
@pytest.mark.parametrize("with_artifacts", [True, False])
def test_no_plan_changes_code_before_its_test_or_diagnosis(
    repo: Path, goal: str, with_artifacts: bool
) -> None:
    arts = request().artifacts if with_artifacts else ()
    actions = _plan(repo, goal, artifacts=arts)
    steps = _steps(actions)
    kind = classify_text(goal).kind
    assert steps[0] == "review"
    assert ("change" in steps) is (kind != "question")  # with or without named files
    if "change" in steps:
        first_change = steps.index("change")
        if kind != "docs":
            assert all(steps.index(s) < first_change for s in ("test", "diagnose") if s in steps)
    assert len(actions) <= 8


_TRACEBACK = """parse_expr("") gives a ValueError on an empty line

Traceback (most recent call last):
  File "/home/me/app/main.py", line 3, in <module>
    Parser().parse_expr("")
  File "/home/me/venv/lib/python3.11/site-packages/pkg/core.py", line 11, in parse_expr
    raise ValueError("empty expression")
ValueError: empty expression
"""


def _code_plan(repo: Path, goal: str) -> tuple[Action, ...]:
    """A plan whose bundle holds the code index's real findings for `goal`."""
    if not (repo / "pkg").exists():
        for rel, text in {"pkg/core.py": CORE, "pkg/util.py": UTIL}.items():
            write(repo, rel, text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "code")
    req = request(goal=goal, blockers=(), artifacts=(), previous_goal=None, previous_outcome=None)
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    bundle = dataclasses.replace(bundle_for(repo, req), code_hits=found.hits)
    return plan_actions(bundle, 8)


def _says(actions: tuple[Action, ...], words: str) -> bool:
    return any(words in f"{a.title} {a.how}".lower() for a in actions)


def test_a_quoted_traceback_is_where_the_search_starts_not_a_traceback_to_capture(
    repo: Path,
) -> None:
    # No practice's word ("error", "crash") in the prose: the frames alone decide.
    actions = _code_plan(repo, _TRACEBACK)
    start = actions[1]  # right after the review, before the ranked files' step
    assert start.title == "Start from the quoted traceback"
    assert start.files == ("pkg/core.py",)
    assert start.how.startswith(
        "The request's traceback ends in this repository at `parse_expr` in `pkg/core.py`, "
        "line 11 of the reporter's traceback (`parse_expr` starts at line 9 here): read that "
        "code and find"
    )
    assert not _says(actions, "capture the full traceback")


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        # A relative path from a checkout is the file.
        ("/home/me/venv/lib/python3.11/site-packages/pkg/core.py", "pkg/core.py", "parse_expr"),
        # A comprehension runs in its function: the frame out of it names it.
        ('line 11, in parse_expr\n    raise ValueError("empty expression")\n', "", "parse_expr"),
        # Another installed package whose path ends like one of ours is not ours.
        ("site-packages/pkg/core.py", "site-packages/docutils/pkg/core.py", None),
    ],
)
def test_the_frame_named_is_the_one_in_this_repository(
    repo: Path, old: str, new: str, where: str | None
) -> None:
    goal = _TRACEBACK.replace(old, new)
    if not new:  # a `<listcomp>` frame inside parse_expr, innermost
        goal = _TRACEBACK.replace(
            'raise ValueError("empty expression")\n',
            'raise ValueError("empty expression")\n'
            '  File "/home/me/venv/lib/python3.11/site-packages/pkg/core.py", line 11, '
            "in <listcomp>\n",
        )
    actions = _code_plan(repo, goal)
    start = [a for a in actions if a.title == "Start from the quoted traceback"]
    if where is None:
        assert not start
    else:
        assert f"at `{where}` in `pkg/core.py`, line 11 of the reporter's" in start[0].how


def test_a_named_exception_says_something_raised(repo: Path) -> None:
    # `ValueError` is not the keyword `error`, but asks for the traceback all the same.
    actions = _code_plan(repo, "parse_expr raises ValueError on input ' 5', which is a bug")
    assert _says(actions, "capture the full traceback")


@pytest.mark.parametrize(
    "goal",
    [
        # Only the reporter's own script and another package are in the traceback.
        _TRACEBACK.replace("site-packages/pkg/core.py", "site-packages/other/lib.py"),
        # A bare file name is any file of that name, not this repository's.
        _TRACEBACK.replace("/home/me/venv/lib/python3.11/site-packages/pkg/core.py", "core.py"),
        # IPython's frames (`<ipython-input-…>`) are not read, but the traceback was captured.
        "parse_expr raises on empty input\n\n---------\nValueError   Traceback (most recent "
        "call last)\n<ipython-input-3-1b2c> in <module>\n----> 1 Parser().parse_expr('')",
    ],
)
def test_no_step_asks_for_a_traceback_the_request_quotes(repo: Path, goal: str) -> None:
    actions = _code_plan(repo, goal)
    assert not _says(actions, "start from the quoted traceback")
    assert not _says(actions, "capture the full traceback")
    assert "diagnose" in _steps(actions)  # the ranked files are still where to look


def test_a_wrong_result_called_a_bug_is_not_told_to_capture_a_traceback(repo: Path) -> None:
    # "bug" chooses the error-handling practice, but nothing raised: its diagnostic (capture
    # the traceback) needs one of its `diagnostic_when` words.
    actions = _code_plan(repo, "Bug: parse_expr returns the wrong tokens for `1+2`")
    assert not _says(actions, "traceback")
    crash = _code_plan(repo, "parse_expr raises an exception on `1+2`")
    assert _says(crash, "capture the full traceback")


def test_the_cause_is_confirmed_and_fixed_where_the_traceback_ends(repo: Path) -> None:
    # `plot.py` ranks first on its outer frames; the error is raised in `scales.py`.
    goal = (
        "Color mapping fails with boolean data\n\nTraceback (most recent call last):\n"
        '  File "/srv/site-packages/pkg/plot.py", line 10, in plot\n'
        '  File "/srv/site-packages/pkg/plot.py", line 40, in _setup_scales\n'
        '  File "/srv/site-packages/pkg/scales.py", line 351, in _setup\n'
        "TypeError: numpy boolean subtract is not supported\n"
    )
    hits = (
        FileHit("pkg/plot.py", 3.0, ("in the traceback at `_setup_scales` line 40",)),
        FileHit(
            "pkg/scales.py",
            2.5,
            ("in the traceback at `_setup` line 351",),
            (UnitHit("ContinuousBase._setup", "method", 320, 390, "def _setup(self)", 1.0, ()),),
        ),
    )
    req = request(goal=goal, blockers=(), artifacts=(), previous_goal=None, previous_outcome=None)
    bundle = dataclasses.replace(bundle_for(kitchen_repo(repo), req), code_hits=hits)
    actions = plan_actions(bundle, 8)
    titles = [a.title for a in actions]
    assert "Confirm the cause in `pkg/scales.py`" in titles
    assert "Fix the cause in `pkg/scales.py`" in titles
    confirm = actions[titles.index("Confirm the cause in `pkg/scales.py`")]
    assert confirm.files[:2] == ("pkg/scales.py", "pkg/plot.py")
    assert "the request's traceback ends in this file" in confirm.how


def test_a_named_file_that_was_moved_is_looked_for_not_created(repo: Path) -> None:
    kitchen_repo(repo)
    git(repo, "mv", "kitchen/shelves.py", "kitchen/storage.py")
    git(repo, "commit", "-q", "-m", "move the shelves into storage")
    sha = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    req = request(
        goal="Fix the bug: OverflowShelf.place loses an order under contention",
        artifacts=("kitchen/shelves.py",),
        blockers=(),
    )
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    bundle = dataclasses.replace(bundle_for(repo, req), code_hits=found.hits)
    actions = plan_actions(bundle, 8)
    by_title = {a.title: a for a in actions}
    gone = by_title["Find out where `kitchen/shelves.py` went"]
    assert f"`{sha}` (“move the shelves into storage”)" in gone.how
    assert f"git show --stat {sha}" in gone.how and gone.step == "locate"
    assert not any(a.step == "create" for a in actions)
    # Where the code is now, the index knows: the fix goes there.
    assert "Fix the cause in `kitchen/storage.py`" in by_title


@pytest.mark.parametrize(
    "how",
    [
        ["rm", "--cached", "-q"],  # a staged deletion: `git restore -- path` fails on it
        ["mv"],  # a staged rename: only the new path is listed by `git status`
        [],  # deleted from the working tree alone
    ],
    ids=["staged-deletion", "staged-rename", "unstaged-deletion"],
)
def test_a_named_file_deleted_since_the_last_commit_is_restored_not_created(
    repo: Path, how: list[str]
) -> None:
    kitchen_repo(repo)
    courier = repo / "kitchen" / "courier.py"
    if how == ["mv"]:
        git(repo, "mv", "kitchen/courier.py", "kitchen/delivery.py")
    else:
        if how:
            git(repo, *how, "kitchen/courier.py")
        courier.unlink()
    artifacts = ("kitchen/courier.py", "kitchen/new_lock.py")
    req = request(goal="deliver() returns None", artifacts=artifacts, blockers=())
    actions = plan_actions(bundle_for(repo, req), 8)
    # Only the file that never existed is one to create.
    created = [a.files for a in actions if a.step == "create"]
    assert created == [("kitchen/new_lock.py",)]
    gone = next(a for a in actions if a.title == "Find out where `kitchen/courier.py` went")
    assert "deleted or moved since the last commit" in gone.how
    restore = "git restore --source=HEAD --staged --worktree -- kitchen/courier.py"
    assert f"`{restore}`" in gone.how
    git(repo, *restore.split()[1:])  # the advice works
    assert courier.is_file()


def test_a_named_file_is_changed_starting_at_the_function_the_index_ranks(repo: Path) -> None:
    # The module's docstring is the first line sharing the goal's words; the function the
    # goal names is further down, and that is where the change starts.
    kitchen_repo(repo)
    text = '"""Rounding of prices."""\n\nRATE = 2\n\n\ndef round_price(value):\n'
    write(repo, "kitchen/pricing.py", text + "    return round(value, RATE)\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pricing")
    req = request(
        goal="Fix the rounding bug in round_price",
        artifacts=("kitchen/pricing.py",),
        blockers=(),
    )
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    bundle = dataclasses.replace(bundle_for(repo, req), code_hits=found.hits)
    fix = next(a for a in plan_actions(bundle, 8) if a.step == "change")
    assert fix.files == ("kitchen/pricing.py",)
    assert fix.how.startswith("Start at `round_price` (line 6)"), fix.how


@pytest.mark.parametrize(
    ("goal", "title"),
    [
        ("Add a CLI that prints hello", "Decide which files the goal needs"),
        ("Why is the sky blue?", "Note that there is no code to read yet"),
    ],
)
def test_an_empty_repository_is_not_searched(make_repo, goal: str, title: str) -> None:
    # No commit, no file: `git grep` for the goal's words could only come back empty.
    root = make_repo(commit=False)
    req = request(goal=goal, artifacts=(), blockers=(), previous_goal=None, previous_outcome=None)
    actions = plan_actions(bundle_for(root, req), 8)
    assert actions[1].title == title and actions[1].step == "locate"
    assert not any("git grep" in a.how for a in actions)
    # A repository with one commit is searched as before.
    (root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "app")
    actions = plan_actions(bundle_for(root, req), 8)
    assert actions[1].title == "Locate the code the goal is about"
