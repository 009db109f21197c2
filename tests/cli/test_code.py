"""`nexusd code …` in-process (no daemon) through click's CliRunner, on a real repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from tests.conftest import git
from tests.daemon.helpers import nexusd_env

SHELF = '''"""Shelves that hold orders until a courier picks them up."""


class Shelf:
    """A shelf with room for a few orders."""

    def place_order(self, order: str) -> bool:
        """Put an order on the shelf if there is room."""
        return len(order) < 10


def shelf_capacity() -> int:
    return 10
'''

COURIER = '''from pkg.shelf import Shelf


class OverflowShelf(Shelf):
    """Takes the orders the hot shelf has no room for."""


def deliver(shelf: Shelf) -> bool:
    return shelf.place_order("soup")
'''

TEST_SHELF = """from pkg.shelf import Shelf


def test_place_order() -> None:
    assert Shelf().place_order("soup")
"""


@pytest.fixture(scope="module", autouse=True)
def _lancedb() -> None:
    """Import lancedb before the leak guard looks (its event-loop thread is per process)."""
    import lancedb  # noqa: F401


@pytest.fixture
def code_repo(repo: Path, tmp_path: Path) -> Path:
    """A package, its test, a file with a syntax error, a binary file, a symlink outside."""
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "pkg" / "shelf.py").write_text(SHELF, encoding="utf-8")
    (repo / "pkg" / "courier.py").write_text(COURIER, encoding="utf-8")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_shelf.py").write_text(TEST_SHELF, encoding="utf-8")
    (repo / "broken.py").write_text("def oops(:\n    return 1\n", encoding="utf-8")
    (repo / "dump.txt").write_bytes(b"\x00\x01\x02 zanzibar binary dump")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def zanzibar_secret():\n    pass\n", encoding="utf-8")
    (repo / "secret.py").symlink_to(outside / "secret.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    return repo


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["code", *args, "-C", str(repo)])
    return result.exit_code, result.stdout, result.stderr


def run_json(repo: Path, *args: str) -> dict:
    code, out, err = run(repo, *args, "--json")
    assert code == 0, err
    assert "parsing files" not in err  # no progress bar with --json
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def test_search_ranks_the_defining_file_with_its_units(code_repo: Path) -> None:
    data = run_json(code_repo, "search", "place an order on the shelf", "-k", "3")

    paths = [hit["path"] for hit in data["hits"]]
    assert paths[0] == "pkg/shelf.py" and len(paths) <= 3
    units = {u["qualname"]: u for u in data["hits"][0]["units"]}
    assert units["Shelf.place_order"]["start"] == 7
    assert data["hits"][0]["reasons"] and data["note"] is None
    assert "secret.py" not in paths  # the symlink is never followed
    # The best tests of the whole ranking come beside the files, for a plan's test step.
    assert [hit["path"] for hit in data["tests"]] == ["tests/test_shelf.py"]
    assert data["title"] == "place an order on the shelf"  # one line: all title


@pytest.mark.parametrize(
    ("paste", "said"),
    [
        (
            "### Describe the bug\nplace_order drops soup\n\nSeen since 2.0",
            "place_order drops soup",
        ),
        ("$ python deliver.py\nFalse", "none (its first line was run at a prompt or opens"),
    ],
    ids=["template", "prompt"],
)
def test_a_pasted_search_says_the_title_it_was_read_with(
    code_repo: Path, paste: str, said: str
) -> None:
    result = CliRunner().invoke(cli, ["code", "search", "-", "-C", str(code_repo)], input=paste)

    assert result.exit_code == 0, result.stderr
    assert f"title: {said}" in result.stderr
    assert result.stdout.splitlines()[0].startswith("pkg/")


def test_search_text_lists_files_then_units_and_shows_progress(code_repo: Path) -> None:
    code, out, err = run(code_repo, "search", "Shelf.place_order")

    assert code == 0
    first, unit = out.splitlines()[:2]
    assert first.startswith("pkg/shelf.py  ")
    assert unit.strip().startswith("pkg/shelf.py:") and "place_order" in unit
    assert "parsing files" in err and "no daemon running" in err


def test_symbols_lists_units_with_kind_lines_and_signature(code_repo: Path) -> None:
    data = run_json(code_repo, "symbols", "pkg/shelf.py")

    assert (data["path"], data["language"], data["status"]) == ("pkg/shelf.py", "python", "ok")
    rows = {(u["kind"], u["qualname"]): u for u in data["units"]}
    assert set(rows) >= {
        ("class", "Shelf"),
        ("method", "Shelf.place_order"),
        ("function", "shelf_capacity"),
    }
    method = rows[("method", "Shelf.place_order")]
    assert (method["start"], method["end"]) == (7, 9)
    assert method["signature"].startswith("def place_order(self, order")
    code, out, _ = run(code_repo, "symbols", "pkg/shelf.py")
    assert code == 0 and out.startswith("pkg/shelf.py  (python, ok)")
    assert "Shelf.place_order  7-9  def place_order" in out


def test_impact_names_subclasses_callers_and_tests(code_repo: Path) -> None:
    data = run_json(code_repo, "impact", "pkg/shelf.py:Shelf")

    assert (data["path"], data["symbol"]) == ("pkg/shelf.py", "Shelf")
    used_by = {(e["path"], e["kind"]) for e in data["used_by"]}
    assert ("pkg/courier.py", "subclass") in used_by
    assert ("tests/test_shelf.py", "test") in used_by
    whole = run_json(code_repo, "impact", "pkg/courier.py")
    assert [(e["path"], e["kind"]) for e in whole["uses"]] == [("pkg/shelf.py", "imports")]


def test_status_counts_problems_and_skipped_files(code_repo: Path) -> None:
    data = run_json(code_repo, "status")

    assert data["complete"] is True and data["progress"] is None
    assert data["languages"]["python"] == 5  # pkg (3), tests (1), broken.py
    assert data["statuses"]["syntax-error"] == 1 and data["statuses"]["binary"] == 1
    assert data["skipped"] == {"symlink (not followed)": 1}
    assert data["skipped_files"] == ["secret.py: symlink (not followed)"]
    assert any(p.startswith("broken.py: syntax-error") for p in data["problems"])
    assert any(p.startswith("dump.txt: binary") for p in data["problems"])
    assert data["last_update"]["parsed"] == data["files"]
    assert data["last_update"]["syntax_errors"] == 1
    assert data["extra"] == {"daemon": False}
    # The index is keyed by blob: a second run parses nothing, and says nothing about it.
    code, out, err = run(code_repo, "status", "--json")
    assert json.loads(out)["last_update"]["parsed"] == 0 and "no daemon running" not in err
    # An update counts its own syntax errors; the index's are in `problems`.
    (code_repo / "pkg" / "courier.py").write_text(COURIER + "\n# edited\n", encoding="utf-8")
    (code_repo / "dump.txt").unlink()
    code, out, err = run(code_repo, "status", "--json")
    last = json.loads(out)["last_update"]
    assert (last["parsed"], last["removed"], last["syntax_errors"]) == (1, 1, 0)
    assert "no daemon running: indexed in this process (1 file parsed, 1 removed in" in err
    assert any(p.startswith("broken.py: syntax-error") for p in json.loads(out)["problems"])
    code, out, _ = run(code_repo, "status")
    assert code == 0 and "state        complete" in out and "broken.py: syntax-error" in out
    assert out.endswith("skipped:\n  secret.py: symlink (not followed)\n")


@pytest.mark.usefixtures("pool_servers")  # 56 files are parsed by worker processes
def test_status_says_when_its_problem_list_is_cut(code_repo: Path) -> None:
    for n in range(55):
        (code_repo / f"bad_{n:02}.py").write_text("def oops(:\n", encoding="utf-8")
    data = run_json(code_repo, "status")
    assert len(data["problems"]) == 50 and data["problems_total"] == 57  # broken.py, dump.txt
    code, out, _ = run(code_repo, "status")
    assert code == 0 and "problems: (the first 50 of 57)\n" in out


def test_reindex_drops_and_rebuilds_and_edits_are_picked_up(code_repo: Path) -> None:
    files = run_json(code_repo, "status")["files"]
    (code_repo / "pkg" / "courier.py").write_text(
        COURIER + "\n\ndef courier_route() -> str:\n    return 'north'\n", encoding="utf-8"
    )

    data = run_json(code_repo, "reindex")

    assert data["report"]["parsed"] == files and data["status"]["files"] == files
    hits = run_json(code_repo, "search", "courier_route")["hits"]
    assert hits[0]["path"] == "pkg/courier.py"
    assert hits[0]["units"][0]["qualname"] == "courier_route"


def test_commands_racing_in_several_processes_store_each_unit_once(code_repo: Path) -> None:
    units = run_json(code_repo, "reindex")["status"]["units"]
    # Readers open the index without the lock: one may read while `reindex` drops it.
    commands = [
        ("code", "reindex"),
        ("code", "search", "shelf"),
        ("code", "reindex"),
        ("code", "status"),
        ("code", "search", "courier"),
    ]
    racing = [
        subprocess.Popen(
            [sys.executable, "-P", "-m", "nexusd", *args, "-C", str(code_repo)],
            env=nexusd_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    errors = [(p.wait(timeout=120), p.communicate()[1]) for p in racing]
    assert [code for code, _ in errors] == [0] * len(commands), errors
    status = run_json(code_repo, "status")
    assert status["units"] == units and status["complete"]
    code, out, _ = run(code_repo, "symbols", "pkg/shelf.py")
    assert code == 0 and sum("Shelf.place_order" in line for line in out.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "exit_code", "message"),
    [
        (("search", "  "), 2, "QUERY is empty"),
        (("symbols", "pkg/nowhere.py"), 10, "`pkg/nowhere.py` is not in the code index"),
        (("symbols", "secret.py"), 10, "`secret.py` is not in the code index"),
        (("symbols", "pkg"), 10, "`pkg` is a folder"),
        (("symbols", "/etc/hostname"), 10, "`/etc/hostname` is outside the repository"),
        (("symbols", "pkg/../../x.py"), 10, "`pkg/../../x.py` is outside the repository"),
        (("symbols", ""), 2, "PATH is empty"),
        (("impact", "nowhere.py:Thing"), 10, "`nowhere.py` is not in the code index"),
        (("impact", ":Shelf"), 2, "PATH is empty"),
        (("impact", "pkg/shelf.py:Nope"), 10, "`Nope` is not defined in `pkg/shelf.py`; it"),
        (("impact", "pkg/shelf.py:Nope.place_order"), 10, "`Nope.place_order` is not defined"),
    ],
)
def test_bad_input_is_a_clear_error(
    code_repo: Path, args: tuple[str, ...], exit_code: int, message: str
) -> None:
    code, out, err = run(code_repo, *args)

    assert code == exit_code, out + err
    assert message in err and not out


def test_paths_are_taken_from_where_the_command_runs(
    code_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(code_repo / "pkg")
    result = CliRunner().invoke(cli, ["code", "symbols", "shelf.py"])
    assert result.exit_code == 0 and result.stdout.startswith("pkg/shelf.py  (python, ok)")
    result = CliRunner().invoke(cli, ["code", "impact", "../tests/test_shelf.py"])
    assert result.exit_code == 0 and result.stdout.startswith("tests/test_shelf.py\n")
    (code_repo / "tests" / "__init__.py").write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["code", "symbols", "__init__.py", "-C", str(code_repo)])
    assert result.exit_code == 10, result.output
    assert "matches 2 indexed files (`pkg/__init__.py`, `tests/__init__.py`)" in result.stderr
    # `-C` is where the command runs, as for git.
    result = CliRunner().invoke(
        cli, ["code", "symbols", "-C", str(code_repo / "tests"), "../broken.py"]
    )
    assert result.exit_code == 0 and result.stdout.startswith("broken.py  (python, syntax-error)")


def test_odd_paths_name_the_file_they_mean(code_repo: Path, tmp_path: Path) -> None:
    (code_repo / "~backup.py").write_text("def kept_safe():\n    pass\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(code_repo)  # the repository reached through a symlink
    for args in (
        ("symbols", "~backup.py"),  # a `~` the shell left alone is part of the name
        ("symbols", str(link / "pkg" / "shelf.py")),
        ("symbols", "pkg\\shelf.py"),
        ("impact", str(link / "pkg" / "shelf.py") + ":Shelf.place_order"),
    ):
        code, out, err = run(code_repo, *args)
        assert code == 0, (args, err)
        assert out.startswith(("~backup.py", "pkg/shelf.py")), (args, out)


def test_a_relative_or_home_index_uri_is_one_place_for_every_process(
    code_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from nexusd.config import config_from_mapping
    from nexusd.lance import index_uri
    from nexusd.paths import find_repo

    layout = find_repo(code_repo)
    monkeypatch.chdir(tmp_path)  # not where the index is meant to be
    for raw, expected in (("idx", code_repo / "idx"), ("~/idx", Path.home() / "idx")):
        config = config_from_mapping({"memory": {"index_uri": raw}}, "test")
        assert index_uri(layout, config) == str(expected)
    (code_repo / ".nexus").mkdir()
    (code_repo / ".nexus" / "config.yaml").write_text("memory:\n  index_uri: idx\n", "utf-8")
    assert run_json(code_repo, "status")["index_uri"] == str(code_repo / "idx")
    assert (code_repo / "idx" / "code.lock").exists() and not (tmp_path / "idx").exists()


def test_disabled_index_and_no_repository(code_repo: Path, tmp_path: Path) -> None:
    (code_repo / ".nexus").mkdir()
    (code_repo / ".nexus" / "config.yaml").write_text("code:\n  enabled: false\n", "utf-8")
    code, _, err = run(code_repo, "status")
    assert code == 3 and "code index is disabled" in err
    bare = tmp_path / "bare"
    bare.mkdir()
    code, _, err = run(bare, "status")
    assert code == 5 and "not inside a git repository" in err


@pytest.mark.parametrize(
    ("target", "path", "symbol"),
    [
        (
            "tokio/src/sync/watch.rs:Receiver::changed",
            "tokio/src/sync/watch.rs",
            "Receiver::changed",
        ),
        ("src/app/config.py:Config.from_file", "src/app/config.py", "Config.from_file"),
        ("server.go:(*Server).serve", "server.go", "(*Server).serve"),
    ],
)
def test_impact_targets_split_after_the_file(target: str, path: str, symbol: str) -> None:
    from nexusd.cli.code import _TARGET

    found = _TARGET.fullmatch(target)
    assert found is not None and (found["path"], found["symbol"]) == (path, symbol)


@pytest.mark.parametrize(
    "spelled", ["Shelf::place_order", "Shelf#place_order", "(*Shelf).place_order"]
)
def test_impact_takes_other_languages_member_syntax(code_repo: Path, spelled: str) -> None:
    code, out, err = run(code_repo, "impact", f"pkg/shelf.py:{spelled}")

    assert code == 0, err
    assert out.startswith("pkg/shelf.py:Shelf.place_order\n")
    assert "pkg/courier.py" in out


def test_a_file_the_index_does_not_read_says_why(code_repo: Path) -> None:
    (code_repo / ".nexus").mkdir()
    (code_repo / ".nexus" / "config.yaml").write_text(
        "code:\n  exclude: ['legacy/*']\n", encoding="utf-8"
    )
    (code_repo / "legacy").mkdir()
    (code_repo / "legacy" / "old.py").write_text("def old():\n    pass\n", encoding="utf-8")
    (code_repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    git(code_repo, "add", "-A")

    (code_repo / "untracked_link.py").symlink_to("/etc/hostname")
    for path, why in (
        ("secret.py", "skipped: symlink (not followed)"),
        ("legacy/old.py", "skipped: excluded by code.exclude"),
        ("logo.png", "not a kind of file the code index reads"),
        ("pkg/nowhere.py", "no such file"),
        ("untracked_link.py", "it is a symbolic link, and links are never followed"),
        ("x" * 300 + ".py", "no such file in the repository"),
    ):
        code, out, err = run(code_repo, "symbols", path)
        assert code == 10 and not out, err
        assert f"`{path}` is not in the code index: {why}" in err, err
    code, _, err = run(code_repo, "impact", "legacy/old.py:old")
    assert code == 10 and "skipped: excluded by code.exclude" in err
    assert "fix: `code.exclude` and `code.default_excludes` in .nexus/config.yaml" in err


def test_impact_of_a_symbol_another_file_defines_names_that_file(code_repo: Path) -> None:
    code, out, err = run(code_repo, "impact", "pkg/courier.py:Shelf.place_order")

    assert code == 10 and not out
    assert "`Shelf.place_order` is not defined in `pkg/courier.py`" in err
    assert "fix: it is defined in `pkg/shelf.py`: `nexusd code impact pkg/shelf.py:Shelf" in err


def test_status_text_says_updating_while_an_update_after_a_build_runs() -> None:
    # A checkout far away parses thousands of files: the status said "complete" meanwhile.
    from nexusd.cli.code import _status_text
    from nexusd.code.status import CodeStatus

    def state(complete: bool, progress: tuple[int, int] | None) -> str:
        found = CodeStatus("uri", 3, 4, {}, {}, (), {}, complete, progress=progress)
        return next(r for r in _status_text(found).splitlines() if r.startswith("state"))

    assert state(True, (64, 1456)) == "state        updating 64/1456"
    assert state(False, (64, 1456)) == "state        building 64/1456"
    assert state(True, None) == "state        complete"


def test_files_gitattributes_marks_vendored_are_skipped_with_the_reason(code_repo: Path) -> None:
    # jq carries decNumber this way (`src/decNumber/** linguist-vendored`): its code would
    # outrank jq's own for every report about numbers.
    (code_repo / ".gitattributes").write_text(
        "# third-party code\ndeps/** linguist-vendored\ndeps/keep/** -linguist-vendored\n",
        encoding="utf-8",
    )
    for rel in ("deps/zanzibar.py", "deps/sub/zanzibar_two.py", "deps/keep/zanzibar_kept.py"):
        (code_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (code_repo / rel).write_text("def zanzibar_order():\n    pass\n", encoding="utf-8")
    git(code_repo, "add", "-A")
    git(code_repo, "commit", "-q", "-m", "vendored")

    data = run_json(code_repo, "status")
    why = "vendored (linguist-vendored in .gitattributes)"
    assert data["skipped"][why] == 2
    assert f"deps/zanzibar.py: {why}" in data["skipped_files"]
    assert f"deps/sub/zanzibar_two.py: {why}" in data["skipped_files"]
    paths = [hit["path"] for hit in run_json(code_repo, "search", "zanzibar_order")["hits"]]
    assert [p for p in paths if p.startswith("deps/")] == ["deps/keep/zanzibar_kept.py"]
    code, _, err = run(code_repo, "symbols", "deps/zanzibar.py")
    assert code == 10 and f"skipped: {why}" in err
    assert "fix: `code.exclude` and `code.default_excludes`" in err
    # The repository's attributes are one of the default excludes: off, they are read.
    (code_repo / ".nexus").mkdir()
    (code_repo / ".nexus" / "config.yaml").write_text(
        "code:\n  default_excludes: false\n", encoding="utf-8"
    )
    assert why not in run_json(code_repo, "status")["skipped"]
    paths = [hit["path"] for hit in run_json(code_repo, "search", "zanzibar_order")["hits"]]
    assert sorted(paths[:3]) == [
        "deps/keep/zanzibar_kept.py",
        "deps/sub/zanzibar_two.py",
        "deps/zanzibar.py",
    ]
