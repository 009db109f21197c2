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
