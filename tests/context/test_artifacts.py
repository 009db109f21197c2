from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.context.artifacts import (
    clean_path,
    find_mentions,
    inspect_artifact,
    python_symbols,
    resolve_inside,
)
from tests.conftest import git
from tests.plan_helpers import bundle_for, config, kitchen_repo, request


def test_python_file_measured_with_symbols(repo: Path) -> None:
    kitchen_repo(repo)
    fact = inspect_artifact(repo, "kitchen/shelves.py", "the shelves")
    assert fact.status == "ok"
    assert fact.rel == "kitchen/shelves.py"
    assert fact.size == (repo / "kitchen/shelves.py").stat().st_size
    assert fact.lines == (repo / "kitchen/shelves.py").read_text().count("\n")
    assert [(s.kind, s.name) for s in fact.symbols] == [
        ("class", "Shelf"),
        ("class", "OverflowShelf"),
        ("function", "place_order"),
        ("function", "drain"),
    ]
    assert fact.symbols[0].line == 4
    assert fact.description == "the shelves"
    assert fact.readable


@pytest.mark.parametrize(
    "raw", ["`kitchen/courier.py`", " kitchen/courier.py:12 ", "- kitchen/courier.py"]
)
def test_decorated_paths_are_cleaned(repo: Path, raw: str) -> None:
    kitchen_repo(repo)
    assert inspect_artifact(repo, raw).rel == "kitchen/courier.py"


def test_missing_file(repo: Path) -> None:
    fact = inspect_artifact(repo, "src/nowhere.py")
    assert (fact.status, fact.rel, fact.note) == ("missing", "src/nowhere.py", "does not exist")


def test_directory(repo: Path) -> None:
    kitchen_repo(repo)
    fact = inspect_artifact(repo, "kitchen")
    assert fact.status == "directory"
    assert "2 entries" in fact.note


def test_unparsable_python_is_measured_and_explained(repo: Path) -> None:
    (repo / "broken.py").write_text("def f(:\n    pass\n")
    fact = inspect_artifact(repo, "broken.py")
    assert fact.status == "ok"
    assert fact.lines == 2
    assert fact.symbols == ()
    assert "does not parse" in fact.note


def test_binary_file_is_not_read(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    fact = inspect_artifact(repo, "blob.bin")
    assert (fact.status, fact.note, fact.text) == ("ok", "binary", None)


def test_text_without_final_newline_counts_last_line(repo: Path) -> None:
    (repo / "notes.txt").write_text("one\ntwo")
    assert inspect_artifact(repo, "notes.txt").lines == 2


@pytest.mark.parametrize(
    ("raw", "how"),
    [
        ("../outside/secret.py", "outside the repository"),
        ("kitchen/../../outside/secret.py", "outside the repository"),
        ("{outside}/secret.py", "outside the repository"),
        ("link_to_secret.py", "through a symlink"),
        ("linkdir/secret.py", "through a symlink"),
        (".git/config", "inside .git"),
    ],
)
def test_paths_leaving_the_repository_are_refused_never_read(
    repo: Path, tmp_path: Path, raw: str, how: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.py"
    secret.write_text("class Secret:\n    pass\n")
    (repo / "link_to_secret.py").symlink_to(secret)
    (repo / "linkdir").symlink_to(outside)
    fact = inspect_artifact(repo, raw.format(outside=outside))
    assert fact.status == "refused"
    assert fact.rel is None
    assert how.rsplit(maxsplit=1)[-1] in fact.note
    assert fact.text is None and fact.symbols == () and fact.size == 0


def test_dotdot_that_stays_inside_is_allowed(repo: Path) -> None:
    kitchen_repo(repo)
    fact = inspect_artifact(repo, "tests/../kitchen/courier.py")
    assert (fact.status, fact.rel) == ("ok", "kitchen/courier.py")


def test_symlink_inside_the_repository_is_followed(repo: Path) -> None:
    kitchen_repo(repo)
    (repo / "alias.py").symlink_to(repo / "kitchen" / "shelves.py")
    fact = inspect_artifact(repo, "alias.py")
    assert (fact.status, fact.rel) == ("ok", "kitchen/shelves.py")


def test_absolute_path_inside_is_accepted(repo: Path) -> None:
    resolved, reason = resolve_inside(repo, str(repo / "README.md"))
    assert resolved == (repo / "README.md").resolve()
    assert reason == ""


def test_clean_path_empty() -> None:
    assert clean_path(" `` ") == ""


def test_python_symbols_ignores_nested_definitions() -> None:
    symbols, note = python_symbols("class A:\n    def m(self):\n        pass\n\nX = 1\n")
    assert [s.name for s in symbols] == ["A"]
    assert note == ""


def test_find_mentions_ranks_lines_by_words_matched(repo: Path) -> None:
    kitchen_repo(repo)
    arts = (
        inspect_artifact(repo, "kitchen/shelves.py"),
        inspect_artifact(repo, "missing.py"),
    )
    hits = find_mentions(arts, ("overflow", "shelf", "contention"), limit=3)
    assert hits[0].path == "kitchen/shelves.py"
    assert set(hits[0].matched) == {"overflow", "shelf", "contention"}
    assert "contention" in hits[0].text
    assert len(hits) == 3
    assert len(hits[1].matched) <= len(hits[0].matched)
    assert find_mentions(arts, ()) == ()


def test_fifo_is_never_opened(repo: Path) -> None:
    os.mkfifo(repo / "fifo")
    # Opening a FIFO for reading would block the pipeline forever.
    fact = inspect_artifact(repo, "fifo")
    assert (fact.status, fact.note, fact.text) == ("unreadable", "not a regular file", None)


def test_only_files_git_would_list_are_read(repo: Path) -> None:
    # A request naming `.env` must not get it quoted into the plan: an artifact is read
    # only when git tracks it or would add it, and never when it is a memory file.
    (repo / ".gitignore").write_text(".env\nsecret_ignored.py\nbuild/\n", encoding="utf-8")
    (repo / ".env").write_text("SECRET=hunter2\n", encoding="utf-8")
    (repo / "secret_ignored.py").write_text("def leak_hunter2():\n    pass\n", encoding="utf-8")
    (repo / "build").mkdir()
    (repo / "build" / "out.py").write_text("HUNTER2 = 1\n", encoding="utf-8")
    (repo / "env_alias").symlink_to(".env")
    (repo / "MEMORY.md").write_text("# Memory\n\n## Security\n\n- k9\n", encoding="utf-8")
    (repo / "src").mkdir()
    (repo / "src" / "util.py").write_text("def helper():\n    pass\n", encoding="utf-8")
    for raw in (".env", "secret_ignored.py", "build/out.py", "env_alias", "MEMORY.md"):
        fact = inspect_artifact(repo, raw)
        assert fact.status == "refused", raw
        assert (fact.text, fact.symbols, fact.size, fact.rel) == (None, (), 0, None), raw
        assert "hunter2" not in fact.note.lower() and "k9" not in fact.note
    assert "git ignores it" in inspect_artifact(repo, ".env").note
    assert "memory file" in inspect_artifact(repo, "MEMORY.md").note
    util = inspect_artifact(repo, "src/util.py")
    assert (util.status, [s.name for s in util.symbols]) == ("ok", ["helper"])


def test_configured_memory_files_are_refused_as_artifacts(repo: Path) -> None:
    (repo / "notes").mkdir()
    (repo / "notes" / "team.md").write_text("## Security\n- the admin password is swordfish\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "notes")
    cfg = config(memory={"extra_globs": ["notes/*.md"]})
    bundle = bundle_for(repo, request(artifacts=("notes/team.md",)), cfg)
    art = next(a for a in bundle.artifacts if a.path == "notes/team.md")
    assert art.status == "refused" and "memory file" in (art.note or "")
