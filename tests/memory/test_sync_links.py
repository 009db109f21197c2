"""Memory files that are links: read when they stay inside the repository, never out of it."""

from __future__ import annotations

from pathlib import Path

from nexusd.memory.sync import read_chunks


def test_memory_file_linked_outside_the_repository_is_not_read(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "passwd"
    secret.write_text("# Secrets\n\nroot:x:0:0:hunter2\n", encoding="utf-8")
    (repo / "MEMORY.md").symlink_to(secret)
    found = read_chunks(repo, "MEMORY.md", max_bytes=1 << 20, max_chars=2000)
    assert found.chunks == ()
    assert found.skipped is not None and "outside the repository" in found.skipped


def test_memory_file_linked_inside_the_repository_is_read(repo: Path) -> None:
    (repo / "notes.md").write_text("# Notes\n\nUse uv for installs.\n", encoding="utf-8")
    (repo / "MEMORY.md").symlink_to(repo / "notes.md")
    found = read_chunks(repo, "MEMORY.md", max_bytes=1 << 20, max_chars=2000)
    assert any("uv" in c.body for c in found.chunks)
