"""`memory add`: entries land under their category heading, the rest of the file untouched."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from nexusd.errors import NexusError
from nexusd.memory.writes import add_memory
from nexusd.paths import find_repo

WHEN = datetime(2026, 5, 6, 7, 8)


def test_creates_memory_md_with_the_category(repo: Path) -> None:
    path = add_memory(
        find_repo(repo), "Use ruff format", category="lessons", tags=["style"], when=WHEN
    )
    assert path.read_text(encoding="utf-8") == (
        "# Memory\n\n## Lessons\n\n- 2026-05-06: Use ruff format #style\n"
    )


def test_inserts_under_an_existing_heading_in_the_middle(repo: Path) -> None:
    original = "# Memory\n\n## Lessons\n\n- old lesson\n\n## Decisions\n\n- keep me\n"
    (repo / "MEMORY.md").write_text(original, encoding="utf-8")
    add_memory(find_repo(repo), "new lesson\nsecond line", category="LESSONS", when=WHEN)
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == (
        "# Memory\n\n## Lessons\n\n- old lesson\n\n- 2026-05-06: new lesson\n  second line\n\n"
        "## Decisions\n\n- keep me\n"
    )


def test_appends_a_new_heading_or_to_the_last_section(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "MEMORY.md").write_text("# Memory\n\n## Lessons\n\n- a", encoding="utf-8")
    add_memory(layout, "b", category="lessons", when=WHEN)
    add_memory(layout, "c", when=WHEN)
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == (
        "# Memory\n\n## Lessons\n\n- a\n\n- 2026-05-06: b\n\n## Notes\n\n- 2026-05-06: c\n"
    )


def test_daily_goes_to_todays_note(repo: Path) -> None:
    path = add_memory(find_repo(repo), "deployed v2", category="ops", daily=True, when=WHEN)
    assert path == repo / "memory/daily/2026-05-06.md"
    assert path.read_text(encoding="utf-8").endswith("## 07:08 ops\n\n- 2026-05-06: deployed v2\n")


@pytest.mark.parametrize(("text", "tags"), [("   ", ()), ("ok", ("bad tag",)), ("ok", ("1x",))])
def test_rejects_empty_text_and_bad_tags(repo: Path, text: str, tags: tuple[str, ...]) -> None:
    with pytest.raises(NexusError):
        add_memory(find_repo(repo), text, tags=tags)
    assert not (repo / "MEMORY.md").exists()


def test_headings_inside_code_fences_are_not_categories(repo: Path) -> None:
    original = "# Memory\n\n## Notes\n\n```\n## Lessons\n```\n\n## Other\n\n- x\n"
    (repo / "MEMORY.md").write_text(original, encoding="utf-8")
    add_memory(find_repo(repo), "real lesson", category="lessons", when=WHEN)
    text = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert text == original + "\n## Lessons\n\n- 2026-05-06: real lesson\n"


@pytest.mark.parametrize(
    "text",
    [
        "harmless lesson\n```",  # an unclosed fence hides every later heading
        "see the docs <!--",  # an unclosed comment swallows the sections after it
        "closing --> early",
        "x\x00y",  # a NUL makes git and the indexer treat MEMORY.md as binary
        "bell\x07",
    ],
)
def test_entries_that_would_break_the_file_are_refused(repo: Path, text: str) -> None:
    layout = find_repo(repo)
    add_memory(layout, "first", category="lessons", when=WHEN)
    before = (repo / "MEMORY.md").read_bytes()
    with pytest.raises(NexusError):
        add_memory(layout, text, category="lessons", when=WHEN)
    assert (repo / "MEMORY.md").read_bytes() == before


def test_an_entry_with_a_whole_code_block_is_kept(repo: Path) -> None:
    layout = find_repo(repo)
    add_memory(layout, "the fix:\n```py\nx = 1\n```\ntab\tok", category="lessons", when=WHEN)
    add_memory(layout, "after it", category="decisions", when=WHEN)
    assert (
        (repo / "MEMORY.md")
        .read_text(encoding="utf-8")
        .endswith("  ```py\n  x = 1\n  ```\n  tab\tok\n\n## Decisions\n\n- 2026-05-06: after it\n")
    )


def test_a_code_block_first_or_last_stays_a_closed_block(repo: Path) -> None:
    # `- date: ```` opens no fence for the readers while its closing line would close one;
    # a tag after the closing fence would keep it open.
    layout = find_repo(repo)
    add_memory(layout, "```sh\nmake\n```", category="lessons", tags=["build"], when=WHEN)
    text = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert text.endswith("- 2026-05-06:\n  ```sh\n  make\n  ```\n  #build\n")


@pytest.mark.parametrize("category", ["lessons", "decisions", "new"])
@pytest.mark.parametrize("daily", [False, True])
def test_a_file_that_is_not_utf8_is_refused_and_left_as_it_was(
    repo: Path, category: str, daily: bool
) -> None:
    # Insertion in the middle was a traceback (exit 70); an append at the end wrote UTF-8
    # into a Latin-1 file and said "indexed", while the index skips the whole file.
    original = b"# Memory\n\n## Lessons\n\n- caf\xe9\n\n## Decisions\n\n- d\n"
    path = repo / ("memory/daily/2026-05-06.md" if daily else "MEMORY.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    with pytest.raises(NexusError, match="not UTF-8") as raised:
        add_memory(find_repo(repo), "new entry", category=category, daily=daily, when=WHEN)
    assert "UTF-8" in (raised.value.hint or "")
    assert path.read_bytes() == original


def test_a_folder_named_memory_md_is_refused(repo: Path) -> None:
    (repo / "MEMORY.md").mkdir()
    with pytest.raises(NexusError, match="not a file"):
        add_memory(find_repo(repo), "new entry", when=WHEN)
