from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.context.toolsfile import parse_tools, read_tools_file

BULLETS = """# Available MCP tools

- `git_log`: list commits
- **run_pytest** — run the test suite
* read_file (read a file)
- Use these tools only when needed.
"""
HEADINGS = """# Tools
## search_code
Search the code base.
## open_url: open a web page
"""
TABLE = """| name | description |
| --- | --- |
| docdex_search | search the index |
| docdex_open | open a snippet |
"""


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (BULLETS, ["git_log", "run_pytest", "read_file"]),
        (HEADINGS, ["search_code", "open_url"]),
        (TABLE, ["docdex_search", "docdex_open"]),
        ("no tools here, just prose.\n", []),
    ],
)
def test_parse_tools(text: str, names: list[str]) -> None:
    assert [t.name for t in parse_tools(text)] == names


def test_descriptions_are_kept() -> None:
    tools = {t.name: t.description for t in parse_tools(BULLETS + TABLE)}
    assert tools["git_log"] == "list commits"
    assert tools["docdex_open"] == "open a snippet"


def test_read_tools_file(repo: Path) -> None:
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "available_mcp_tools.md").write_text(BULLETS)
    facts = read_tools_file(repo, ".cursor/available_mcp_tools.md")
    assert facts.exists
    assert [t.name for t in facts.tools] == ["git_log", "run_pytest", "read_file"]


@pytest.mark.parametrize(
    ("name", "exists", "note"),
    [
        (None, False, ""),
        ("none", False, ""),
        (".cursor/missing.md", False, "does not exist"),
        ("../tools.md", False, "refused"),
    ],
)
def test_tools_file_absent_or_refused(
    repo: Path, tmp_path: Path, name: str | None, exists: bool, note: str
) -> None:
    (tmp_path / "tools.md").write_text(BULLETS)
    facts = read_tools_file(repo, name)
    assert facts.exists is exists
    assert facts.tools == ()
    assert note in facts.note
