"""Which paths count as memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.config import config_from_mapping
from nexusd.memory.sources import is_memory_path, list_memory_files

CONFIG = config_from_mapping({"memory": {"extra_globs": ["docs/adr/*.md", "notes/**/*.md"]}})


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("MEMORY.md", True),
        ("memory/daily/2026-01-01.md", True),
        ("memory/daily/sub/2026-01-01.md", False),
        ("memory/daily/.2026-01-01.md.abc.tmp", False),
        ("docs/adr/0001-db.md", True),
        ("notes/a/b/c.md", True),
        ("notes/top.md", True),
        ("README.md", False),
        ("../MEMORY.md", False),
    ],
)
def test_is_memory_path(tmp_path: Path, rel: str, expected: bool) -> None:
    root = tmp_path / "r"
    root.mkdir()
    assert is_memory_path(root, CONFIG, root / rel) is expected
    assert is_memory_path(root, CONFIG, Path(rel)) is expected


def test_list_memory_files_only_lists_existing_visible_files(tmp_path: Path) -> None:
    for rel in ["MEMORY.md", "memory/daily/2026-01-01.md", "memory/daily/.x.md", "docs/adr/1.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    (tmp_path / "docs/adr/dir.md").mkdir()
    assert list_memory_files(tmp_path, CONFIG) == [
        "MEMORY.md",
        "docs/adr/1.md",
        "memory/daily/2026-01-01.md",
    ]
