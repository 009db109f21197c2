"""Ingest through `nexusd mcp` (real subprocess, SDK client, real index): refused before
anything is written when it cannot succeed, and never an id the index does not hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from api.conftest import error_text, result_json, run_mcp

pytestmark = pytest.mark.slow


def configure(repo: Path, memory: str) -> None:
    (repo / ".nexus" / "config.yaml").write_text(
        f"memory:\n{memory}sandbox:\n  backend: subprocess\n", encoding="utf-8"
    )


async def save(session: ClientSession) -> Any:
    return await session.call_tool("memory_save", {"text": "Pin the runner image by digest."})


def test_an_entry_that_would_pass_max_file_bytes_is_refused(memory_repo: Path) -> None:
    configure(memory_repo, "  enabled: true\n  max_file_bytes: 1000\n")
    memory = memory_repo / "MEMORY.md"
    before = "# Memory\n\n## Lessons\n\n" + "- an old lesson that fills the file\n" * 26
    memory.write_text(before, encoding="utf-8")
    assert 900 < len(before) < 1000

    refused = error_text(run_mcp(memory_repo, save))
    assert "bad request" in refused and "memory.max_file_bytes (1000)" in refused
    assert "move old entries out" in refused and str(memory_repo) not in refused
    assert memory.read_text(encoding="utf-8") == before


def test_memory_disabled_refuses_before_writing(memory_repo: Path) -> None:
    configure(memory_repo, "  enabled: false\n")

    refused = error_text(run_mcp(memory_repo, save))
    assert "memory is disabled" in refused
    assert not (memory_repo / "MEMORY.md").exists()  # a retry will not write it twice


def test_an_entry_written_but_not_indexed_has_no_id(memory_repo: Path) -> None:
    configure(memory_repo, "  enabled: true\n  sources: ['docs/*.md']\n")

    saved = result_json(run_mcp(memory_repo, save))
    assert saved["indexed"] is False and "id" not in saved
    assert saved["path"] == "MEMORY.md" and "not indexed" in saved["note"]
    assert "Pin the runner image" in (memory_repo / "MEMORY.md").read_text(encoding="utf-8")
