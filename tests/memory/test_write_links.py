"""Memory writes never follow a link out of the repository: refused, the target untouched."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from nexusd.errors import NexusError
from nexusd.memory.daily import append_daily_entry, daily_path
from nexusd.memory.writes import add_memory
from nexusd.paths import find_repo

WHEN = datetime(2026, 5, 6, 7, 8)
BASHRC = "export PATH=$HOME/bin:$PATH\n"


def _entry(repo: Path) -> None:
    append_daily_entry(
        find_repo(repo), when=WHEN, cycle=1, goal="g", status="ok", response_path="r.md"
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the repository, standing in for ~/.bashrc."""
    path = tmp_path / "elsewhere" / ".bashrc"
    path.parent.mkdir()
    path.write_text(BASHRC, encoding="utf-8")
    return path


def _link_today(repo: Path, target: Path) -> Path:
    note = daily_path(find_repo(repo), WHEN)
    note.parent.mkdir(parents=True, exist_ok=True)
    note.symlink_to(target)
    return note


def test_a_daily_note_linked_out_is_refused(repo: Path, outside: Path) -> None:
    note = _link_today(repo, outside)
    with pytest.raises(NexusError, match="outside the repository") as caught:
        _entry(repo)
    assert str(note) in caught.value.message and f"rm {note}" in (caught.value.hint or "")
    assert outside.read_text(encoding="utf-8") == BASHRC
    with pytest.raises(NexusError, match="outside the repository"):
        add_memory(find_repo(repo), "a note", daily=True, when=WHEN)
    assert outside.read_text(encoding="utf-8") == BASHRC


def test_a_dangling_link_out_creates_nothing(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "planted.md"
    _link_today(repo, target)
    with pytest.raises(NexusError, match="outside the repository"):
        _entry(repo)
    assert not target.exists()


def test_a_daily_folder_linked_out_is_refused(repo: Path, outside: Path) -> None:
    (repo / "memory").mkdir()
    (repo / "memory" / "daily").symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(NexusError, match="outside the repository"):
        _entry(repo)
    assert sorted(p.name for p in outside.parent.iterdir()) == [".bashrc"]


@pytest.mark.parametrize(
    "existing", ["", "# Memory\n\n## Lessons\n\n- old\n", "# Memory\n\n## Lessons\n\n- a\n\n## B\n"]
)
def test_memory_md_linked_out_is_refused(repo: Path, outside: Path, existing: str) -> None:
    # Create, append and insert-in-the-middle: the last read the target into MEMORY.md.
    outside.write_text(existing or BASHRC, encoding="utf-8")
    (repo / "MEMORY.md").symlink_to(outside)
    with pytest.raises(NexusError, match="outside the repository"):
        add_memory(find_repo(repo), "lesson", category="Lessons", when=WHEN)
    assert outside.read_text(encoding="utf-8") == (existing or BASHRC)
    assert (repo / "MEMORY.md").is_symlink()


def test_a_link_inside_the_repository_is_written_through(repo: Path) -> None:
    (repo / "notes.md").write_text("# Memory\n", encoding="utf-8")
    (repo / "MEMORY.md").symlink_to("notes.md")
    add_memory(find_repo(repo), "kept", when=WHEN)
    assert "- 2026-05-06: kept" in (repo / "notes.md").read_text(encoding="utf-8")


def test_a_link_planted_after_the_check_is_not_followed(repo: Path, outside: Path) -> None:
    # The final open refuses a link (O_NOFOLLOW): the race window cannot be used either.
    from nexusd.memory.safewrite import append_block

    note = repo / "note.md"
    os.symlink(outside, note)
    with pytest.raises(NexusError, match="became a symbolic link"):
        append_block(note, "## x\n")
    assert outside.read_text(encoding="utf-8") == BASHRC


def test_a_daily_folder_linked_out_names_the_link_not_the_file(repo: Path, outside: Path) -> None:
    # `rm memory/daily/<today>.md` would go through the link and delete a file out there:
    # the fix names the folder that is the link, and removing that removes the link only.
    (repo / "memory").mkdir()
    link = repo / "memory" / "daily"
    link.symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(NexusError, match="outside the repository") as caught:
        _entry(repo)
    hint = caught.value.hint or ""
    assert f"rm {link}" in hint and ".md" not in hint, hint
    assert "memory/daily is a symbolic link" in caught.value.message
    assert str(outside.parent) in caught.value.message


def test_a_memory_file_that_links_to_itself_is_refused_with_its_fix(repo: Path) -> None:
    memory = repo / "MEMORY.md"
    memory.symlink_to("MEMORY.md")  # a loop: no file is ever reached
    with pytest.raises(NexusError, match="never reaches a file") as caught:
        add_memory(find_repo(repo), "a lesson", category="lessons")
    assert f"rm {memory}" in (caught.value.hint or "")
    assert memory.is_symlink()
