"""The code operations' answers: why a path names no indexed file, and a search's title."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.code.ops import _not_listed, handle_code_op
from nexusd.code.service import CodeIndex
from nexusd.config import config_from_mapping
from nexusd.paths import find_repo
from tests.code.conftest import NET
from tests.conftest import git


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        ("/etc/hostname", "it is outside the repository"),
        ("../elsewhere.py", "it is outside the repository"),
        ("pkg/../../up.py", "it is outside the repository"),
        ("link.py", "it is a symbolic link, and links are never followed"),
        ("ignored.py", "git does not track it and .gitignore excludes it"),
        ("{root}/ignored.py", "git does not track it and .gitignore excludes it"),
        ("nowhere.py", "no such file in the repository"),
        ("x" * 300 + ".py", "no such file in the repository"),  # too long to be a name
        ("nul\0.py", "no such file in the repository"),
        # Files git lists nowhere, for reasons that are not .gitignore's:
        ("vendor/lib/mod.py", "it is inside `vendor/lib`, a submodule or another git"),
        (".git/config", "it is inside `.git`, git's own folder"),
        ("etc/passwd", "it is reached through `etc`, a symbolic link"),
        ("pipe.py", "it is not a regular file (a FIFO, socket or device)"),
        ("folder", "it is a folder: name one file in it"),
        ("fresh.py", "git does not list it (`git status` says why)"),
    ],
)
def test_a_path_git_lists_no_file_for_says_why(tmp_path: Path, tail: str, why: str) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("ignored.py\n", encoding="utf-8")
    (tmp_path / "ignored.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "fresh.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "link.py").symlink_to("/etc/hostname")
    (tmp_path / "etc").symlink_to("/etc")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "folder").mkdir()
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    git(tmp_path / "vendor" / "lib", "init", "-q")
    (tmp_path / "vendor" / "lib" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    assert _not_listed(tmp_path, tail.format(root=tmp_path)).startswith(why)


# What the title orders: `fetch` is the API a report uses (client.py defines it), the rest
# of the line says what goes wrong in the module below it.
TITLED = "fetch hangs while backoff doubles up to the timeout"


@pytest.fixture
def net_index(tmp_path: Path) -> CodeIndex:
    """An index of the three `NET` files in a real repository."""
    git(tmp_path, "init", "-q")
    for path, text in NET.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "net")
    index = CodeIndex(find_repo(tmp_path), config_from_mapping({"code": {"workers": 1}}, "test"))
    index.update()
    return index


def first_two(index: CodeIndex, query: str) -> list[str]:
    answer = handle_code_op(index, {"op": "code_search", "query": query})
    assert answer is not None and answer["ok"]
    return [hit["path"] for hit in answer["hits"][:2]]


def test_a_one_line_search_is_its_own_title(net_index: CodeIndex) -> None:
    untitled = [hit.path for hit in net_index.search(TITLED).hits[:2]]
    assert untitled == ["net/client.py", "net/transport.py"]

    answer = handle_code_op(net_index, {"op": "code_search", "query": f"\n  {TITLED}\n"})
    assert answer is not None and answer["ok"]
    first, second = answer["hits"][:2]
    assert (first["path"], second["path"]) == ("net/transport.py", "net/client.py")
    assert first["reasons"][0].startswith("holds more of the title than `net/client.py` (")


@pytest.mark.parametrize(
    "query",
    [
        f"{TITLED}\nSeen on every call since 2.0.",
        f"### Describe the bug\n{TITLED}\n\n### To Reproduce\nfetch(url)",
        f"<!-- Please describe the bug,\n search existing issues first -->\n{TITLED}\nfetch(url)",
        f"**Describe the bug**\r\n- [x] I searched the issues\r\n{TITLED}\r\n",
        f"Bug report\n\n{TITLED}\nfetch(url)",
        f"Hi team, can someone help?\n{TITLED}\n",
        f"Investigate the issue below and find where it happens.\n\n{TITLED}\nfetch(url)",
    ],
    ids=[
        "two-lines",
        "template-heading",
        "template-comment",
        "bold-label-crlf",
        "bare-bug-report",
        "plea",
        "agent-task",
    ],
)
def test_a_pasted_reports_title_is_its_first_line_past_a_forms_markup(
    net_index: CodeIndex, query: str
) -> None:
    # As a plan finds its goal's title (boilerplate.title): a report pasted into a search
    # ranks as the plan for it does. Untitled, the same text puts the API it uses first.
    untitled = [hit.path for hit in net_index.search(query).hits[:2]]
    assert untitled == ["net/client.py", "net/transport.py"]
    assert first_two(net_index, query) == ["net/transport.py", "net/client.py"]
    answer = handle_code_op(net_index, {"op": "code_search", "query": query})
    assert answer is not None and answer["title"] == TITLED  # the answer says what it read


@pytest.mark.parametrize(
    "query",
    [f"$ {TITLED}", f">>> fetch(url)\n{TITLED}", f"```\n{TITLED}\n```"],
    ids=["shell-prompt", "python-prompt-first", "fence-first"],
)
def test_a_prompt_or_a_code_block_first_gives_no_title(net_index: CodeIndex, query: str) -> None:
    assert first_two(net_index, query) == ["net/client.py", "net/transport.py"]
