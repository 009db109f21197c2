"""CodeIndex on real repositories: blob-keyed updates, edits, checkouts, persistence, bad input."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from nexusd.code.service import CodeIndex
from nexusd.code.store import GENERATED_FILE
from nexusd.config import config_from_mapping
from nexusd.errors import IndexStoreError
from nexusd.paths import find_repo
from tests.code.conftest import CORE, write
from tests.conftest import git


def index_for(root: Path, **code: object) -> CodeIndex:
    config = config_from_mapping({"code": {"workers": 1, **code}}, "test")
    return CodeIndex(find_repo(root), config)


def test_first_update_indexes_tracked_source_and_explains_the_rest(code_repo: Path) -> None:
    index = index_for(code_repo)
    report = index.update()
    status = index.status()
    assert report.parsed == status.files == 7
    assert status.languages == {"python": 5, "text": 2}
    assert status.statuses == {"ok": 4, "fallback": 1, "syntax-error": 1, "binary": 1}
    assert status.skipped == {
        "symlink (not followed)": 1,
        "excluded by code.exclude or the default excludes": 1,
    }
    assert any(p.startswith("pkg/broken.py: syntax-error (line 1:") for p in status.problems)
    assert "pkg/data.txt: binary (a NUL byte in its first 8 KiB)" in status.problems
    assert status.complete and status.progress is None
    assert index.symbols("pkg/core.py")[1].qualname == "Parser"


def test_search_finds_the_defining_file_and_unit_with_reasons(code_repo: Path) -> None:
    index = index_for(code_repo)
    index.update()
    results = index.search("parse_expr raises on empty input", title="parse_expr raises")
    top = results.hits[0]
    assert top.path == "pkg/core.py"
    assert "defines `Parser.parse_expr`" in top.reasons
    assert top.units[0].qualname == "Parser.parse_expr"
    assert top.units[0].start == 9
    # The test is found too, but below the code it tests.
    paths = [h.path for h in results.hits]
    assert paths.index("tests/test_core.py") > 0


def test_unchanged_blobs_are_never_parsed_again(code_repo: Path) -> None:
    index = index_for(code_repo)
    index.update()
    assert index.update().parsed == 0
    again = index_for(code_repo)  # a new process: loads the LanceDB tables
    report = again.update()
    assert report.parsed == 0 and report.unchanged == 7
    assert again.search("tokenize").hits[0].path == "pkg/util.py"


def test_working_tree_edits_are_indexed_before_they_are_committed(code_repo: Path) -> None:
    index = index_for(code_repo)
    index.update()
    write(code_repo, "pkg/util.py", "def detokenize(parts):\n    return ' '.join(parts)\n")
    write(code_repo, "pkg/new.py", "def brand_new_helper():\n    return 1\n")
    report = index.update()
    assert report.parsed == 2
    assert index.search("brand_new_helper").hits[0].path == "pkg/new.py"
    assert index.search("detokenize").hits[0].path == "pkg/util.py"
    (code_repo / "pkg/new.py").unlink()
    assert index.update().removed == 1


@pytest.mark.parametrize("staged", [False, True], ids=["rm", "git-add-then-rm"])
def test_a_tracked_file_deleted_in_the_working_tree_leaves_the_index(
    code_repo: Path, staged: bool
) -> None:
    index = index_for(code_repo)
    index.update()
    if staged:  # `AM`/`MD` in `git status`: the index has a blob the work tree no longer has
        write(code_repo, "pkg/util.py", "def tokenize_again():\n    pass\n")
        git(code_repo, "add", "pkg/util.py")
    (code_repo / "pkg/util.py").unlink()
    report = index.update()
    assert report.removed == 1
    assert index.parsed("pkg/util.py") is None
    assert all(hit.path != "pkg/util.py" for hit in index.search("tokenize").hits)


def test_checkout_reparses_only_the_changed_files(code_repo: Path) -> None:
    index = index_for(code_repo)
    index.update()
    first = git(code_repo, "rev-parse", "HEAD").strip()
    write(code_repo, "pkg/util.py", "def split_words(text):\n    return text.split()\n")
    git(code_repo, "rm", "-q", "pkg/broken.py")
    git(code_repo, "commit", "-qam", "second")
    assert index.update().parsed == 1
    git(code_repo, "checkout", "-q", "--detach", first)
    report = index.update()
    assert (report.parsed, report.removed) == (2, 0)  # util.py and broken.py come back
    assert index.search("tokenize").hits[0].path == "pkg/util.py"


def test_issue_templates_are_never_indexed(code_repo: Path) -> None:
    # Every report is written from it: it would rank first for all of them.
    write(code_repo, ".github/ISSUE_TEMPLATE/bug_report.md", "Describe the bug\n")
    index = index_for(code_repo)
    index.update()
    assert index.parsed(".github/ISSUE_TEMPLATE/bug_report.md") is None
    assert index.status().skipped["excluded by code.exclude or the default excludes"] == 2


@pytest.mark.parametrize(("watched", "defaults"), [(None, True), (["plans"], True), (["."], False)])
def test_nexusds_own_files_are_never_indexed(
    code_repo: Path, watched: list[str] | None, defaults: bool
) -> None:
    # Its config, its requests and responses (wherever they are watched for) and the memory:
    # a plan about the code must not point at them (`.nexus/config.yaml` was ranked in a
    # small repository), whatever `code.default_excludes` says.
    folder = watched[0] if watched else ".scratchpad_logs"
    write(code_repo, ".nexus/config.yaml", "checks:\n  - name: tests\n    run: parse_expr\n")
    write(code_repo, f"{folder}/2026-01-01T00_00_00_plan_request.md", "parse_expr fails\n")
    write(code_repo, f"{folder}/2026-01-01T00_00_00_plan_response.md", "# Plan: parse_expr\n")
    write(code_repo, "memory/daily/2026-01-01.md", "parse_expr raised\n")
    write(code_repo, "MEMORY.md", "# Memory\n\nparse_expr is fragile\n")
    code = {"workers": 1, "default_excludes": defaults}
    extra = {"watch": {"paths": watched}} if watched else {}
    index = CodeIndex(find_repo(code_repo), config_from_mapping({"code": code, **extra}, "t"))
    index.update()
    indexed = {h.path for h in index.search("parse_expr", k=20).hits}
    assert indexed and all(p.startswith(("pkg/", "tests/")) for p in indexed), indexed
    assert index.status().skipped["nexusd's own file (its config, requests or memory)"] == 5


def test_gitattributes_vendor_files_but_never_bring_back_the_default_excludes(
    code_repo: Path,
) -> None:
    # The code_repo fixture carries node_modules/lib/index.js, a default exclude.
    write(
        code_repo,
        ".gitattributes",
        "pkg/util.py linguist-vendored\nnode_modules/** -linguist-vendored\n",
    )
    write(code_repo, "pkg/sub/.gitattributes", b"* linguist-vendored\n\0")  # binary: ignored
    write(code_repo, "pkg/sub/mod.py", "def sub():\n    pass\n")
    index = index_for(code_repo)
    index.update()
    status = index.status()
    assert status.skipped["vendored (linguist-vendored in .gitattributes)"] == 1
    assert status.skipped["excluded by code.exclude or the default excludes"] == 1
    assert index.parsed("pkg/util.py") is None and index.parsed("pkg/sub/mod.py") is not None
    # Edited in the working tree: the next update reads the edit.
    write(code_repo, ".gitattributes", "# nothing vendored\n")
    index.update()
    assert index.parsed("pkg/util.py") is not None
    assert "vendored (linguist-vendored in .gitattributes)" not in index.status().skipped


# What both files below define; `lib/alpha.py` sorts first, so only a mark puts it below.
MARKED_QUERY = "resolve_widget_layout returns the wrong layout"


@pytest.fixture
def marked_repo(code_repo: Path) -> Path:
    """The same code twice; `.gitattributes` marks the copy `lib/alpha.py` generated
    (protoc's output, say): where no fix goes."""
    text = "def resolve_widget_layout(widget):\n    return widget.layout\n"
    write(code_repo, "lib/alpha.py", text)
    write(code_repo, "lib/beta.py", text)
    write(code_repo, ".gitattributes", "lib/alpha.py linguist-generated\n")
    git(code_repo, "add", "-A")
    git(code_repo, "commit", "-qm", "generated")
    return code_repo


def test_files_gitattributes_mark_generated_are_searched_but_ranked_below(
    marked_repo: Path,
) -> None:
    code_repo, query = marked_repo, MARKED_QUERY

    def scores(index: CodeIndex) -> tuple[float, float]:
        hits = {h.path: h.score for h in index.search(query).hits}
        return hits["lib/alpha.py"], hits["lib/beta.py"]

    index = index_for(code_repo)
    index.update()
    assert index.symbols("lib/alpha.py")[1].qualname == "resolve_widget_layout"
    generated, plain = scores(index)
    assert generated == pytest.approx(plain / 2, rel=1e-3)  # as a `DO NOT EDIT` file ranks
    assert index.status().generated == 1
    # A new process parses nothing, yet reads the mark; an edit of the mark alone re-ranks.
    reopened = index_for(code_repo)
    assert reopened.update().parsed == 0 and scores(reopened) == (generated, plain)
    write(code_repo, ".gitattributes", "lib/alpha.py -linguist-generated\n")
    assert index.update().parsed == 0 and scores(index) == (plain, plain)
    assert index.status().generated == 0


def test_an_index_only_opened_ranks_what_the_last_update_found_generated(
    marked_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The CLI and the API read a socketless daemon's index with `open()` alone: no listing,
    # so the marks must come with what is stored, or the generated copy ranks first.
    code_repo, query = marked_repo, MARKED_QUERY

    def opened() -> tuple[list[str], int]:
        reader = index_for(code_repo)
        reader.open()
        return [h.path for h in reader.search(query).hits[:2]], reader.status().generated

    writer = index_for(code_repo)
    writer.update()
    assert opened() == (["lib/beta.py", "lib/alpha.py"], 1)
    # The mark taken back: an update that parses nothing still tells the next reader.
    write(code_repo, ".gitattributes", "lib/alpha.py -linguist-generated\n")
    assert writer.update().parsed == 0
    assert opened() == (["lib/alpha.py", "lib/beta.py"], 0)
    write(code_repo, ".gitattributes", "lib/alpha.py linguist-generated\n")
    writer.update()
    assert opened()[1] == 1
    # What cannot be read is no mark, and no error: the next update writes it again.
    kept = Path(writer.store.uri) / GENERATED_FILE
    for broken in (b"{not json", b'{"a": 1}', b'["lib/alpha.py", 3]'):
        kept.write_bytes(broken)
        assert opened() == (["lib/alpha.py", "lib/beta.py"], 0)
    kept.unlink()
    assert opened()[1] == 0
    assert index_for(code_repo).update().parsed == 0 and opened()[1] == 1
    # Marks that cannot be written (a read-only mount) are a warning once, not a failure.
    kept.unlink()
    kept.mkdir()
    again = index_for(code_repo)
    with caplog.at_level(logging.WARNING, logger="nexusd.code"):
        assert again.update().parsed == 0 and again.update().parsed == 0
    assert [h.path for h in again.search(query).hits[:2]] == ["lib/beta.py", "lib/alpha.py"]
    assert sum("cannot keep which files" in r.getMessage() for r in caplog.records) == 1
    # Writable again: other marks are kept, and then the ones that once failed are too.
    kept.rmdir()
    write(code_repo, ".gitattributes", "lib/beta.py linguist-generated\n")
    again.update()
    assert opened() == (["lib/alpha.py", "lib/beta.py"], 1)
    write(code_repo, ".gitattributes", "lib/alpha.py linguist-generated\n")
    again.update()
    assert opened() == (["lib/beta.py", "lib/alpha.py"], 1)


def test_size_cap_and_custom_excludes(code_repo: Path) -> None:
    write(code_repo, "pkg/big.py", "x = 1\n" * 400)
    index = index_for(code_repo, max_file_bytes=1000, exclude=["tests/*"])
    index.update()
    status = index.status()
    assert any(p.startswith("pkg/big.py: too-large") for p in status.problems)
    assert index.symbols("tests/test_core.py") == ()


def test_reset_rebuilds_from_scratch(code_repo: Path) -> None:
    index = index_for(code_repo)
    index.update()
    index.reset()
    assert index.status().files == 0
    assert index.update().parsed == 7


@pytest.mark.parametrize("kind", ["empty", "detached"])
def test_odd_repositories(tmp_path: Path, code_repo: Path, kind: str) -> None:
    if kind == "empty":
        root = tmp_path / "empty"
        root.mkdir()
        git(root, "init", "-q")
        index = index_for(root)
        assert index.update().parsed == 0
        assert index.search("anything at all").hits == ()
    else:
        git(code_repo, "checkout", "-q", "--detach", "HEAD")
        index = index_for(code_repo)
        assert index.update().parsed == 7


def test_an_index_another_process_wrote_is_reloaded_not_stored_twice(code_repo: Path) -> None:
    first, second = index_for(code_repo), index_for(code_repo)  # as two processes
    first.open()
    assert second.update().parsed == 7
    report = first.update()  # holds nothing in memory, but the rows are stored now
    assert report.parsed == 0 and report.unchanged == 7
    write(code_repo, "pkg/new.py", "def brand_new_helper():\n    return 1\n")
    assert second.update().parsed == 1
    assert first.update().parsed == 0
    assert first.search("brand_new_helper").hits[0].path == "pkg/new.py"
    units = first.status().units
    assert index_for(code_repo).status().units == 0  # not opened: nothing loaded yet
    reopened = index_for(code_repo)
    reopened.open()
    assert reopened.status().units == units == second.status().units
    assert [u.qualname for u in reopened.symbols("pkg/new.py")] == ["pkg.new", "brand_new_helper"]


@pytest.mark.parametrize("tracked", [True, False])
def test_a_file_name_that_is_not_utf8_is_skipped_not_fatal(code_repo: Path, tracked: bool) -> None:
    # git keeps names as bytes: one Latin-1 name once made every write of the index fail.
    name = os.fsencode(code_repo) + b"/pkg/caf\xe9.py"
    Path(os.fsdecode(name)).write_text("def latin_named():\n    return 1\n")
    if tracked:
        git(code_repo, "add", "-A")
        git(code_repo, "commit", "-qm", "a Latin-1 name")
    index = index_for(code_repo)
    assert index.update().parsed == 7
    assert index.status().skipped["file name is not UTF-8 (not indexed)"] == 1
    # nexusd's own reasons before the excludes a user asked for; the name shown escaped.
    assert index.status().skipped_files[:2] == (
        "outside: symlink (not followed)",
        "pkg/caf\\xe9.py: file name is not UTF-8 (not indexed)",
    )
    assert index.search("tokenize").hits[0].path == "pkg/util.py"
    assert index_for(code_repo).update().parsed == 0  # what was stored reopens


def test_files_a_failed_write_did_not_store_are_parsed_again(
    code_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = index_for(code_repo)
    index.update()
    write(code_repo, "pkg/new.py", "def brand_new_helper():\n    return 1\n")

    def full_disk(batch: object) -> None:  # what LanceDB raises when the disk is full
        raise IndexStoreError("code index: write failed (OSError: No space left on device)")

    monkeypatch.setattr(index.store, "add", full_disk)
    with pytest.raises(IndexStoreError):
        index.update()
    assert index.parsed("pkg/new.py") is None  # not trusted: it was never stored
    monkeypatch.undo()
    assert index.update().parsed == 1
    assert index_for(code_repo).update().parsed == 0  # and now it is stored


def test_a_lone_surrogate_in_a_docstring_is_stored_replaced(code_repo: Path) -> None:
    write(code_repo, "pkg/odd.py", 'def odd():\n    """\\udce9 escaped"""\n')
    index = index_for(code_repo)
    assert index.update().parsed == 8
    again = index_for(code_repo)
    again.open()
    assert again.symbols("pkg/odd.py")[1].doc == "? escaped"


def test_an_update_waits_for_another_process_then_parses_only_the_rest(
    code_repo: Path,
) -> None:
    first, second = index_for(code_repo), index_for(code_repo)
    first.open()
    waited = threading.Event()
    done: list[int] = []
    with first.store.writing():  # as a process in the middle of a build
        worker = threading.Thread(
            target=lambda: done.append(second.update(on_wait=waited.set).parsed)
        )
        worker.start()
        assert waited.wait(30)
        assert not done  # it waits while the other holds the lock
    worker.join(30)
    assert done == [7]


def test_a_reader_that_meets_a_rebuild_midway_reads_again_once_it_is_done(
    code_repo: Path,
) -> None:
    first, second = index_for(code_repo), index_for(code_repo)
    first.update()
    failures: list[BaseException] = []

    def read() -> None:
        try:
            second.open()
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    with first.store.writing():  # `reindex` in another process, halfway through its drop
        shutil.rmtree(Path(first.store.uri) / "code_files.lance" / "data")
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(2)
        assert reader.is_alive()  # its read failed: it waits for the rebuild to finish
        first.store.drop()
        first.store.open()
    reader.join(30)
    assert not failures and not reader.is_alive()
    assert second.update().parsed == 7


def test_an_index_whose_lock_cannot_be_written_still_serves(code_repo: Path) -> None:
    index = index_for(code_repo)
    index.update()
    # A lock file that only opens for reading (a read-only mount, another user's file):
    # the OS refuses O_RDWR on a folder just as it does there.
    lock = Path(index.store.uri) / "code.lock"
    lock.unlink()
    lock.mkdir()
    again = index_for(code_repo)
    assert again.update().parsed == 0
    assert again.search("tokenize").hits[0].path == "pkg/util.py"


def test_line_ranges_end_at_the_last_line_an_editor_shows(code_repo: Path) -> None:
    write(code_repo, "notes/six.txt", "".join(f"line {i}\n" for i in range(1, 7)))
    write(code_repo, "notes/one.txt", "just one line\n")
    write(code_repo, "notes/bare.txt", "no final newline")
    index = index_for(code_repo)
    index.update()
    for path, end in (("notes/six.txt", 6), ("notes/one.txt", 1), ("notes/bare.txt", 1)):
        file_unit, window = index.parsed(path).units
        assert (file_unit.end, window.start, window.end, window.name) == (
            end,
            1,
            end,
            f"lines 1-{end}",
        )
    assert index.parsed("pkg/core.py").units[0].end == len(CORE.splitlines())


def test_a_minified_and_a_latin1_file_are_explained(code_repo: Path) -> None:
    write(code_repo, "web/app.min.css", "a{b:c}" * 2000)  # excluded by default (*.min.css)
    write(code_repo, "web/long.css", "a{b:c}" * 2000)  # one line of 12 kB: minified
    write(code_repo, "pkg/legacy.py", "# caf\xe9\nNAME = 'x'\n".encode("latin-1"))
    index = index_for(code_repo)
    index.update()
    problems = "\n".join(index.status().problems)
    assert "web/long.css: fallback (minified or generated (very long lines))" in problems
    assert "pkg/legacy.py: ok (not UTF-8 at byte 5; read as Latin-1)" in problems
    assert index.symbols("pkg/legacy.py")[0].defines == ("NAME",)


def test_a_reopened_index_ranks_exactly_as_the_one_that_built_it(code_repo: Path) -> None:
    built = index_for(code_repo)
    built.update()
    query = "Parser.parse_expr fails on empty input; tokenize splits words"
    reopened = index_for(code_repo)
    reopened.open()
    assert reopened.search(query).hits == built.search(query).hits != ()
    # What is stored is each unit's packed token counts, never its text.
    rows = reopened.store._units.search().limit(None).to_arrow().to_pylist()
    assert "text" not in rows[0] and any("parse_expr" in r["terms"].split() for r in rows)


def test_raised_messages_are_stored_and_found_by_a_new_process(code_repo: Path) -> None:
    write(
        code_repo,
        "pkg/config.py",
        "def load(path):\n    if not path.exists():\n        raise FileNotFoundError(\n"
        "            f'no configuration file at {path}; run setup first')\n",
    )
    git(code_repo, "add", "-A")
    git(code_repo, "commit", "-qm", "config")
    index_for(code_repo).update()
    reopened = index_for(code_repo)
    reopened.open()
    report = "Startup fails:\nFileNotFoundError: no configuration file at /etc/x; run setup first"
    top = reopened.search(report).hits[0]
    assert top.path == "pkg/config.py"
    assert top.reasons[0] == 'raises or logs "no configuration file at"'
    assert top.units[0].qualname == "load"


def test_an_index_stored_by_an_older_version_is_rebuilt(code_repo: Path) -> None:
    import lancedb

    old = index_for(code_repo)
    db = lancedb.connect(old.store.uri)
    db.create_table("code_units", data=[{"path": "pkg/core.py", "blob": "x", "text": "old"}])
    db.create_table("code_files", data=[{"path": "pkg/core.py", "blob": "x"}])
    index = index_for(code_repo)
    report = index.update()
    assert report.parsed == 7 and index.search("parse_expr").hits[0].path == "pkg/core.py"


def test_an_index_made_by_another_parser_is_parsed_again(code_repo: Path) -> None:
    """Same columns, but the units were parsed by an older parser (one that put a Python
    `mod.py` in its package's place): kept, they would stay wrong until each file changed."""
    import lancedb

    from nexusd.code.store import _schemas

    old = index_for(code_repo)
    db = lancedb.connect(old.store.uri)
    files_schema, units_schema = _schemas()
    # Rows for pkg/core.py's real blob, which an index trusts without parsing it again.
    blob = git(code_repo, "rev-parse", "HEAD:pkg/core.py").strip()
    row = {"path": "pkg/core.py", "blob": blob, "language": "python", "status": "ok"}
    db.create_table("code_files", schema=files_schema).add([{**row, "note": ""}])
    unit = {"path": "pkg/core.py", "blob": blob, "ordinal": 0, "kind": "file", "name": "core.py"}
    unit |= {"qualname": "pkg", "line_start": 1, "line_end": 1, "terms": ""}
    db.create_table("code_units", schema=units_schema.with_metadata({})).add([unit])
    index = index_for(code_repo)
    report = index.update()
    assert report.parsed == 7 and index.search("parse_expr").hits[0].path == "pkg/core.py"
    assert index.parsed("pkg/core.py").file_unit.qualname == "pkg.core"  # type: ignore[union-attr]


def _module(i: int, flavour: str) -> str:
    body = "".join(
        f"    def method_{j}_{flavour}(self):\n        return {j}\n\n" for j in range(i % 7)
    )
    body = body or "    pass\n"
    return f'"""Module {i}."""\n\n\nclass Widget{i}{flavour.title()}:\n{body}'


@pytest.mark.usefixtures("pool_servers")
def test_worker_processes_index_exactly_as_the_parent_does(
    code_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many files go to parser worker processes in balanced chunks and are written to LanceDB
    in batches; the result is the one a single process makes, after a checkout too."""
    import nexusd.code.service as service

    monkeypatch.setattr(service, "STORE_BATCH", 16)  # several batches, and a partial last one
    for i in range(70):
        write(code_repo, f"gen/mod_{i}.py", _module(i, "old") + "x = 1\n" * (i * 20))
    git(code_repo, "add", "-A")
    git(code_repo, "commit", "-qm", "generated")
    first = git(code_repo, "rev-parse", "HEAD").strip()
    for i in range(0, 70, 2):
        write(code_repo, f"gen/mod_{i}.py", _module(i, "new"))
    git(code_repo, "commit", "-qam", "half changed")

    def both() -> tuple[CodeIndex, CodeIndex]:
        pooled = index_for(code_repo, workers=2)
        alone = CodeIndex(
            pooled.layout,
            config_from_mapping(
                {"code": {"workers": 1}, "memory": {"index_uri": str(tmp_path / "alone")}}, "t"
            ),
        )
        return pooled, alone

    pooled, alone = both()
    assert pooled.update().parsed == alone.update().parsed == 77
    git(code_repo, "checkout", "-q", "--detach", first)
    assert pooled.update().parsed == alone.update().parsed == 35
    for query in ("Widget12Old method_5_old", "Widget13Old", "parse_expr tokenize"):
        assert pooled.search(query).hits == alone.search(query).hits != ()
    assert pooled.search("Widget12Old").hits[0].path == "gen/mod_12.py"
    reopened, _ = both()  # what the batches stored is what the pool parsed
    reopened.open()
    assert reopened.search("method_5_old").hits == pooled.search("method_5_old").hits
    rows = reopened.store._units.search().limit(None).to_arrow().to_pylist()
    assert len(rows) == len({(r["path"], r["ordinal"]) for r in rows})  # no stale duplicates


def test_a_name_in_another_script_is_found_whole(code_repo: Path) -> None:
    write(code_repo, "caisse/café.py", "def café_total(prix):\n    return sum(prix)\n")
    write(code_repo, "caisse/данные.py", "def данные_load(path):\n    return open(path).read()\n")
    git(code_repo, "add", "-A")
    git(code_repo, "commit", "-qm", "unicode names")
    index = index_for(code_repo)
    index.update()
    top = index.search("café_total returns the wrong sum").hits[0]
    assert top.path == "caisse/café.py" and top.units[0].qualname == "café_total"
    assert "defines `café_total`" in top.reasons  # the name the report says, whole
    top = index.search("данные_load падает").hits[0]
    assert top.path == "caisse/данные.py" and "defines `данные_load`" in top.reasons


@pytest.mark.bwrap
def test_an_outdated_index_on_a_read_only_mount_still_serves_searches(
    bwrap_usable: None, code_repo: Path
) -> None:
    """It cannot be rebuilt there; dropping it failed the open (`Read-only file system`)."""
    import subprocess
    import sys

    import lancedb

    index = index_for(code_repo)
    index.update()
    db = lancedb.connect(index.store.uri)
    units = db.open_table("code_units").to_arrow().replace_schema_metadata({})
    db.drop_table("code_units")
    db.create_table("code_units", data=units)  # as an older parser left it
    state = code_repo / ".git" / "nexus"
    script = (
        "import sys; from pathlib import Path; from nexusd.config import config_from_mapping;"
        "from nexusd.paths import find_repo; from nexusd.code.service import CodeIndex;"
        "i = CodeIndex(find_repo(Path(sys.argv[1])), config_from_mapping({})); i.open();"
        "print(i.search('parse_expr').hits[0].path)"
    )
    command = ["bwrap", "--bind", "/", "/", "--ro-bind", str(state), str(state)]
    command += ["--dev", "/dev", "--proc", "/proc", sys.executable, "-c", script, str(code_repo)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "pkg/core.py"


def test_a_file_edited_while_an_update_parses_is_not_kept_under_its_old_blob(
    tmp_path: Path,
) -> None:
    # The listing names each file's blob before the files are read: one edited in between
    # was read as edited; kept under the listed blob, it stayed so once the edit was undone.
    for i in range(150):
        write(tmp_path, f"m{i:03d}.py", f"def f{i}():\n    pass\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "files")
    index = index_for(tmp_path)
    edited: list[int] = []

    def edit_while_parsing(done: int, total: int) -> None:
        if not edited:  # the first chunk is parsed; m149.py is not yet
            edited.append(done)
            write(tmp_path, "m149.py", "def edited_meanwhile():\n    pass\n")

    index.update(edit_while_parsing)
    assert edited and [u.name for u in index.symbols("m149.py")][1:] == ["edited_meanwhile"]
    git(tmp_path, "checkout", "--", "m149.py")  # back at the blob the listing named
    assert index.update().parsed == 1
    assert [u.name for u in index.symbols("m149.py")][1:] == ["f149"]
    again = index_for(tmp_path)
    again.update()
    assert [u.name for u in again.symbols("m149.py")][1:] == ["f149"]


def test_a_file_dated_in_the_future_is_parsed_once(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "def a():\n    pass\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "a")
    ahead = time.time() + 86_400  # clock skew, `touch -d '+1 day'`, an archive's dates
    os.utime(tmp_path / "a.py", (ahead, ahead))
    index = index_for(tmp_path)
    assert index.update().parsed == 1
    assert index.update().parsed == 0  # was parsed again at every update
