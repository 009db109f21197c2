"""Which ranked file a quoted traceback's frame is: the longest shared ending of its path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nexusd.code.query import Frame
from nexusd.code.rank import FileHit, UnitHit
from nexusd.planner.quoted_trace import innermost, quoted_frames, trace_action
from tests.plan_helpers import bundle_for, kitchen_repo, request

_SITE = "/srv/venv/lib/python3.11/site-packages"


@pytest.mark.parametrize(
    ("frames", "paths", "want"),
    [
        # The longest shared ending wins over the better-ranked file.
        ([f"{_SITE}/a/util/io.py"], ["b/util/io.py", "a/util/io.py"], ("a/util/io.py", 0)),
        # On a tie the better-ranked file is taken.
        (["util/io.py"], ["b/util/io.py", "a/util/io.py"], ("b/util/io.py", 0)),
        # The innermost frame in a ranked file, past frames of other code.
        ([f"{_SITE}/pkg/core.py", "/home/me/app/main.py"], ["pkg/core.py"], ("pkg/core.py", 0)),
        # An installed package's whole import path must be ours (sphinx-8595's docutils).
        (
            [
                f"{_SITE}/sphinx/directives/__init__.py",
                f"{_SITE}/docutils/parsers/rst/directives/__init__.py",
            ],
            ["sphinx/directives/__init__.py"],
            ("sphinx/directives/__init__.py", 0),
        ),
        (
            [f"{_SITE}/matplotlib/axes/_base.py"],
            ["lib/matplotlib/axes/_base.py"],
            ("lib/matplotlib/axes/_base.py", 0),
        ),
        # A reporter's own project whose path ends like ours is not ours.
        (["/home/me/myproj/utils/io.py"], ["pkg/utils/io.py"], None),
        # A bare file name, or one shared part only, is no match.
        (["core.py"], ["pkg/core.py"], None),
        (["/home/me/other/core.py"], ["pkg/core.py"], None),
    ],
)
def test_a_frame_is_the_ranked_file_sharing_the_longest_ending(
    frames: list[str], paths: list[str], want: tuple[str, int] | None
) -> None:
    assert innermost(tuple(Frame(p, 1, "f") for p in frames), paths) == want


@pytest.mark.parametrize(
    ("goal", "want"),
    [
        ('Traceback (most recent call last):\n  File "a/b.py", line 3, in f\nKeyError: 1', 1),
        ("KeyError  Traceback (most recent call last)\n<ipython-input-3-1b> in <module>", 0),
        ("parse_expr returns the wrong tokens", None),
    ],
)
def test_a_quoted_traceback_is_told_from_none(goal: str, want: int | None) -> None:
    frames = quoted_frames(goal)
    assert (None if frames is None else len(frames)) == want


def test_of_chained_tracebacks_the_cause_is_taken() -> None:
    head = "Traceback (most recent call last):\n"
    cause = f'{head}  File "/s/pkg/core.py", line 9, in build\nKeyError: 1\n'
    wrapper = f'{head}  File "/s/pkg/io.py", line 4, in read\nIOError: x\n'
    for link in (
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
    ):
        frames = quoted_frames(f"read fails\n\n{cause}\n{link}\n\n{wrapper}")
        assert frames is not None and [f.function for f in frames] == ["read", "build"]
        assert innermost(frames, ["pkg/io.py", "pkg/core.py"]) == ("pkg/core.py", 1)
        # Where the cause is none of ours, the wrapper's frame is still found.
        assert innermost(frames, ["pkg/io.py"]) == ("pkg/io.py", 0)


def _unit(qualname: str, start: int, end: int) -> UnitHit:
    return UnitHit(qualname, "method", start, end, f"def {qualname}(self)", 1.0, ())


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # Several methods share the frame's name: the one holding the line is meant.
        (1117, "`DateTime._bind_to_schema` starts at line 1113 here"),
        (340, "`Field._bind_to_schema` starts at line 335 here"),
        # The reporter's version is longer: the nearest one starting above the line.
        (1500, "`List._bind_to_schema` starts at line 1389 here"),
    ],
)
def test_the_trace_step_names_the_method_holding_the_frames_line(
    repo: Path, line: int, want: str
) -> None:
    hit = FileHit(
        "src/marshmallow/fields.py",
        1.0,
        (),
        (
            _unit("Field._bind_to_schema", 335, 350),
            _unit("DateTime._bind_to_schema", 1113, 1125),
            _unit("List._bind_to_schema", 1389, 1400),
        ),
    )
    bundle = dataclasses.replace(bundle_for(kitchen_repo(repo), request()), code_hits=(hit,))
    frames = (Frame(f"{_SITE}/marshmallow/fields.py", line, "_bind_to_schema"),)
    action = trace_action(bundle, frames)
    assert action is not None and want in action.how
