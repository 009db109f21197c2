"""read_inside: a regular file inside the repository, reached without following links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.code.reader import read_inside


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("token = 'no'\n")
    (root / "alias").symlink_to("pkg")  # a folder link that stays inside
    (root / "escape").symlink_to(tmp_path / "outside")
    os.mkfifo(root / "pipe")
    return root


@pytest.mark.parametrize(
    ("rel", "inside_links", "expected"),
    [
        ("pkg/core.py", False, b"x = 1\n"),
        ("pkg/./../pkg/core.py", False, b"x = 1\n"),
        (".", False, "not a regular file (not read)"),
        ("pkg", False, "not a regular file (not read)"),
        ("pipe", False, "not a regular file (not read)"),
        ("escape/secret.py", False, "leads outside the repository (not read)"),
        ("escape/secret.py", True, "leads outside the repository (not read)"),
        ("../outside/secret.py", False, "leads outside the repository (not read)"),
        ("alias/core.py", True, b"x = 1\n"),  # the link's checked target is read
    ],
)
def test_what_is_read_and_what_is_refused(
    tree: Path, rel: str, inside_links: bool, expected: bytes | str
) -> None:
    assert read_inside(tree, rel, 1000, inside_links=inside_links) == expected


def test_a_folder_link_on_the_way_is_never_followed_without_inside_links(tree: Path) -> None:
    # Each step is opened without following links, so a folder swapped for a link after the
    # containment check cannot lead the read out of the repository.
    found = read_inside(tree, "alias/core.py", 1000)
    assert isinstance(found, str) and found.startswith("unreadable")
