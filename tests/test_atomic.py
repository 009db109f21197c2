"""Atomic writes: whole files under any name a file system accepts, temporaries found again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.atomic import atomic_write_text, new_file

NAME_MAX = 255  # ext4, xfs, btrfs, tmpfs


@pytest.mark.parametrize("length", [200, 237, 238, 254, 255])
def test_any_name_that_fits_can_be_written(tmp_path: Path, length: int) -> None:
    name = "x" * (length - len("_plan_response.md")) + "_plan_response.md"
    target = tmp_path / name

    atomic_write_text(target, "whole\n")

    assert target.read_text(encoding="utf-8") == "whole\n"
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary left


@pytest.mark.parametrize("stem", ["y" * 240, "é" * 119])
def test_the_temporary_of_a_long_name_still_says_whose_it_is(tmp_path: Path, stem: str) -> None:
    name = f"{stem}_plan_response.md"
    first, first_path = new_file(tmp_path, f".{name}.", ".tmp")
    other, other_path = new_file(tmp_path, f".z{name[1:]}.", ".tmp")
    os.close(first)
    os.close(other)

    for path in (first_path, other_path):
        assert len(os.fsencode(path.name)) <= NAME_MAX
        assert path.name.startswith(".") and path.name.endswith(".tmp")
        path.name.encode("utf-8")  # cut on a whole character: still valid UTF-8
    # The stale-file cleanup finds it by its end; two names never share a temporary's start.
    assert sorted(tmp_path.glob(".*plan_response.md.*.tmp")) == sorted([first_path, other_path])
    assert first_path.name.split("~")[0] != other_path.name.split("~")[0]
