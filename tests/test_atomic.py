"""Atomic writes: whole files under any name a file system accepts, temporaries found again."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from nexusd.atomic import atomic_write_text, link_into_place, new_file, staged_file

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


def test_a_staged_file_is_linked_into_place_whole_with_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "x_plan_response.md"
    staged = staged_file(target, b"whole\n", mode=0o644)
    assert staged.name.startswith(".x_plan_response.md.") and staged.name.endswith(".tmp")
    assert link_into_place(staged, target)
    assert target.read_bytes() == b"whole\n"
    assert target.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # the temporary is gone


def test_linking_into_place_never_replaces_a_file_that_is_there(tmp_path: Path) -> None:
    target = tmp_path / "x_plan_response.md"
    target.write_text("a person's text\n", encoding="utf-8")
    staged = staged_file(target, b"nexusd's text\n")
    assert not link_into_place(staged, target)
    assert target.read_text(encoding="utf-8") == "a person's text\n"
    assert staged.read_bytes() == b"nexusd's text\n"  # the caller decides what comes next
    dangling = tmp_path / "y_plan_response.md"
    dangling.symlink_to(tmp_path / "nowhere")
    assert not link_into_place(staged, dangling)
    assert dangling.is_symlink()


def test_without_hard_links_a_free_name_is_still_taken_and_a_taken_one_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    target = tmp_path / "x_plan_response.md"
    target.write_text("a person's text\n", encoding="utf-8")
    staged = staged_file(target, b"new\n")
    assert not link_into_place(staged, target)
    assert target.read_text(encoding="utf-8") == "a person's text\n"
    target.unlink()
    assert link_into_place(staged, target)
    assert target.read_bytes() == b"new\n"
    assert not staged.exists()
