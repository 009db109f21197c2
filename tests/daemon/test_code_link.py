"""The daemon's code index: built in the background, asked over the socket, kept fresh by
file events and git hooks, and quiet when nothing changes. Real daemons through the CLI."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.helpers import nexusd, nexusd_env, wait_until, write_config
from nexusd.config import load_config
from nexusd.daemon.code_link import CodeLink, relevant
from nexusd.paths import find_repo
from tests.conftest import git

# The code ops ride on the memory index's socket: memory must be on for the daemon to answer.
CONFIG = "memory:\n  enabled: true\n"

SHELF = '''class Shelf:
    """Holds orders until a courier picks them up."""

    def place_order(self, order: str) -> bool:
        return len(order) < 10
'''

COURIER = """from pkg.shelf import Shelf


def deliver(shelf: Shelf) -> bool:
    return shelf.place_order("soup")
"""

COURIER_B = (
    COURIER
    + """

def courier_route(city: str) -> str:
    return city.upper()
"""
)


def code_json(repo: Path, *args: str) -> tuple[dict[str, Any], str]:
    """`nexusd code ARGS --json` as a subprocess: (data, stderr)."""
    proc = nexusd(repo, "code", *args, "--json")
    return json.loads(proc.stdout), proc.stderr


def status(repo: Path) -> dict[str, Any]:
    return code_json(repo, "status")[0]


def search_units(repo: Path, query: str) -> set[tuple[str, str]]:
    """(path, qualname) of every unit the daemon's search returns for `query`."""
    data, err = code_json(repo, "search", query)
    assert "no daemon running" not in err, err  # answered by the daemon, not in-process
    return {(hit["path"], u["qualname"]) for hit in data["hits"] for u in hit["units"]}


@pytest.fixture
def code_served(served: Path) -> tuple[Path, str, str]:
    """A repository with two commits (B adds `courier_route`), checked out at A."""
    write_config(served, CONFIG)
    (served / "pkg").mkdir()
    (served / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (served / "pkg" / "shelf.py").write_text(SHELF, encoding="utf-8")
    (served / "pkg" / "courier.py").write_text(COURIER, encoding="utf-8")
    git(served, "add", "-A")
    git(served, "commit", "-q", "-m", "A")
    first = git(served, "rev-parse", "HEAD").strip()
    (served / "pkg" / "courier.py").write_text(COURIER_B, encoding="utf-8")
    git(served, "commit", "-q", "-am", "B")
    second = git(served, "rev-parse", "HEAD").strip()
    git(served, "checkout", "-q", first)
    return served, first, second


def started(repo: Path, start_daemon: Callable[..., Path]) -> dict[str, Any]:
    """Start the daemon and wait for its first build; the code status then."""
    start_daemon(repo, "--timeout", "120")
    return wait_until(
        lambda: (s := status(repo))["complete"] and s["extra"].get("state") == "ready" and s,
        timeout=120,
        what="the first build of the code index",
    )


@pytest.mark.parametrize(
    ("rel", "is_directory", "expected"),
    [
        ("pkg/shelf.py", False, True),
        ("README.md", False, True),
        ("pkg/.gitignore", False, True),
        (".gitattributes", False, True),  # vendors or marks files generated
        ("pkg/.gitattributes", False, True),
        ("pkg/x.gitattributes", False, False),
        ("pkg/sub", True, True),
        ("pkg/.shelf.py.swp", False, False),  # a file the index never reads
        ("pkg/__pycache__/shelf.cpython-311.pyc", False, False),
        ("web/node_modules/left-pad/index.js", False, False),
        (".venv/lib/site.py", False, False),
        (".git/index", False, False),
        (".scratchpad_logs/1_plan_request.md", False, False),
        ("memory/daily/2026-01-01.md", False, False),
        ("MEMORY.md", False, False),
        ("vendor/x/.git/HEAD", False, False),
    ],
)
def test_which_changes_can_change_the_index(rel: str, is_directory: bool, expected: bool) -> None:
    assert relevant(rel, is_directory=is_directory) is expected


@contextlib.contextmanager
def running_link(repo: Path) -> Iterator[CodeLink]:
    """A CodeLink on `repo`, started and through its first build; stopped afterwards."""
    link = CodeLink(find_repo(repo), load_config(repo), logging.getLogger("test"))
    link.start()
    try:
        wait_until(lambda: link.state == "ready", timeout=60, what="the first build")
        yield link
    finally:
        link.stop()


@pytest.mark.slow
def test_reads_never_wake_the_link_and_writes_do(code_served: tuple[Path, str, str]) -> None:
    repo, _, _ = code_served
    with running_link(repo) as link:
        assert link.updates == 1
        for _ in range(3):
            for path in repo.rglob("*.py"):
                path.read_bytes()
        time.sleep(1.0)  # several quiet periods: a read would have set an update off
        assert link.updates == 1

        (repo / "pkg" / "fresh.py").write_text("def fresh_start() -> None:\n    pass\n", "utf-8")
        wait_until(lambda: link.updates == 2, what="an update for the new file")
        assert link.index.parsed("pkg/fresh.py") is not None
    assert link.state == "stopped"


@pytest.mark.slow
def test_an_edit_of_gitattributes_alone_reranks(code_served: tuple[Path, str, str]) -> None:
    repo, _, _ = code_served
    with running_link(repo) as link:
        assert link.index.status().generated == 0
        # No code file changes: only what `.gitattributes` says of one.
        (repo / ".gitattributes").write_text("pkg/courier.py linguist-generated\n", "utf-8")
        wait_until(lambda: link.updates == 2, what="an update for .gitattributes")
        assert link.index.status().generated == 1
        corpus = link.index.corpus
        assert corpus is not None and corpus.auxiliary[corpus.index["pkg/courier.py"]]


@pytest.mark.slow
def test_a_read_right_after_an_edit_sees_the_edit(code_served: tuple[Path, str, str]) -> None:
    repo, _, _ = code_served
    link = CodeLink(find_repo(repo), load_config(repo), logging.getLogger("test"))
    link.start()
    try:
        wait_until(lambda: link.state == "ready", what="the first build")
        kicks = link._kicks
        (repo / "pkg" / "fresh.py").write_text("def zebra_crossing() -> None:\n    pass\n", "utf-8")
        # The watcher has seen the write, the update has not run (it waits for quiet).
        wait_until(lambda: link._kicks > kicks, timeout=10, what="the write's event")
        answer = link.handle({"op": "code_search", "query": "zebra_crossing"})
        assert answer is not None and answer["hits"][0]["path"] == "pkg/fresh.py"
        assert answer["note"] is None
        symbols = link.handle({"op": "code_symbols", "path": "pkg/fresh.py"})
        assert symbols is not None and symbols["found"]

        # A restarted daemon: the first read waits for the stored index, it is not "empty".
        link.stop()
        link = CodeLink(find_repo(repo), load_config(repo), logging.getLogger("test"))
        link.start()
        answer = link.handle({"op": "code_search", "query": "zebra_crossing"})
        assert answer is not None and answer["hits"][0]["path"] == "pkg/fresh.py"

        # An update that cannot finish in time: the answer says its results may be stale.
        (repo / "pkg" / "later.py").write_text("def yak_shaving() -> None:\n    pass\n", "utf-8")
        wait_until(lambda: link._kicks > kicks + 1, timeout=10, what="the second event")
        with link.index.store.writing():  # the update waits for the index's lock
            answer = link.handle({"op": "code_search", "query": "yak_shaving"})
            symbols = link.handle({"op": "code_symbols", "path": "pkg/shelf.py"})
            impact = link.handle({"op": "code_impact", "path": "pkg/shelf.py"})
        assert answer is not None and "not in these results yet" in answer["note"]
        assert symbols is not None and "not in these results yet" in symbols["note"]
        assert impact is not None and "not in these results yet" in impact["impact"]["note"]
        wait_until(lambda: link.index.parsed("pkg/later.py") is not None, what="the update")
    finally:
        link.stop()


@pytest.mark.slow
def test_folders_made_while_the_link_starts_watching_never_deadlock_it(
    code_served: tuple[Path, str, str],
) -> None:
    # watchdog dispatches events under its observer's lock; the link once held its own
    # watch lock while asking the observer to watch a folder: with top-level folders made
    # and removed while it watched 150 others, the two threads waited on each other.
    repo, _, _ = code_served
    for i in range(150):
        (repo / f"folder{i:03}").mkdir()
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            folder = repo / f"churn{i % 20}"
            with contextlib.suppress(OSError):
                folder.mkdir()
                folder.rmdir()
            i += 1

    def attempt() -> None:
        churner = threading.Thread(target=churn, daemon=True)
        stop.clear()
        churner.start()
        try:
            with running_link(repo) as link:
                assert len(link.watching()) >= 151  # pkg/ and the 150 folders
        finally:
            stop.set()
            churner.join()

    for _ in range(3):
        attempt()


@pytest.mark.slow
def test_the_daemon_answers_code_ops_and_stays_idle(
    code_served: tuple[Path, str, str], start_daemon: Callable[..., Path]
) -> None:
    repo, _, _ = code_served
    first = started(repo, start_daemon)

    assert first["extra"]["daemon"] is True and first["languages"]["python"] == 3
    assert ("pkg/shelf.py", "Shelf.place_order") in search_units(repo, "place an order")
    symbols, _ = code_json(repo, "symbols", "pkg/courier.py")
    assert [u["qualname"] for u in symbols["units"]] == ["deliver"]
    impact, _ = code_json(repo, "impact", "pkg/shelf.py:Shelf")
    # `deliver(shelf: Shelf)` names the class in an annotation: a reference, not a call.
    assert ("pkg/courier.py", "names") in {(e["path"], e["kind"]) for e in impact["used_by"]}
    # `nexusd status` shows the index.
    daemon_status = json.loads(nexusd(repo, "status", "--json").stdout)
    assert daemon_status["code"]["complete"] is True
    assert daemon_status["code"]["files"] == first["files"]
    text = nexusd(repo, "status").stdout
    assert f"code index {first['files']} files, {first['units']} units, complete" in text

    # Idle: reading the index (searches, status) never wakes an update.
    time.sleep(1.0)  # let anything the start-up itself set off settle
    before = status(repo)["extra"]["updates"]
    time.sleep(2.0)
    search_units(repo, "courier")
    assert status(repo)["extra"]["updates"] == before


@pytest.mark.slow
def test_edits_and_a_checkout_reach_the_index(
    code_served: tuple[Path, str, str], start_daemon: Callable[..., Path]
) -> None:
    repo, _, second = code_served
    nexusd(repo, "hooks", "install")
    started(repo, start_daemon)
    assert ("pkg/courier.py", "courier_route") not in search_units(repo, "courier_route")

    # An edit in the work tree (not staged) is indexed through the file watcher.
    (repo / "pkg" / "shelf.py").write_text(
        SHELF + "\n\ndef zebra_marker() -> None:\n    pass\n", encoding="utf-8"
    )
    wait_until(
        lambda: ("pkg/shelf.py", "zebra_marker") in search_units(repo, "zebra_marker"),
        what="the edited file in the index",
    )

    # A checkout of another commit: the new content is indexed (the edit is carried over).
    git(repo, "checkout", "-q", second)
    wait_until(
        lambda: ("pkg/courier.py", "courier_route") in search_units(repo, "courier_route"),
        what="the checked-out file in the index",
    )
    assert ("pkg/shelf.py", "zebra_marker") in search_units(repo, "zebra_marker")

    # The post-checkout hook asked for an update too (one log line per update).
    def hook_update() -> bool:
        lines = nexusd(repo, "logs", "--json", "-n", "200").stdout.splitlines()
        records = [json.loads(line) for line in lines]
        return any(
            r["msg"] == "code index updated" and "post-checkout" in r["reasons"] for r in records
        )

    wait_until(hook_update, what="an update for the post-checkout hook")


@pytest.mark.slow
def test_without_a_socket_the_cli_reads_the_daemons_index(
    code_served: tuple[Path, str, str], start_daemon: Callable[..., Path]
) -> None:
    repo, _, _ = code_served
    write_config(repo, "memory:\n  enabled: false\n")  # no memory index: no socket
    start_daemon(repo)

    def stored() -> dict[str, Any]:
        proc = nexusd(repo, "code", "status", "--json")
        assert "has no socket: reading its index as stored" in proc.stderr
        data: dict[str, Any] = json.loads(proc.stdout)
        return data if data["languages"].get("python") == 3 else {}

    data = wait_until(stored, what="the daemon's first build, read from the store")
    assert data["last_update"] is None  # this process only read; the daemon writes
    refused = nexusd(repo, "code", "reindex", check=False)
    assert refused.returncode == 8 and "nexusd stop" in refused.stderr


@pytest.mark.slow
def test_a_repository_module_cannot_shadow_the_daemons_own(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    """The daemon runs from the repository root with `python -P`: a served project's own
    top-level `yaml.py` (or `torch/`) is code to index, not a module the daemon imports."""
    write_config(served, CONFIG)
    (served / "yaml.py").write_text("raise ImportError('the project shadows PyYAML')\n")
    git(served, "add", "-A")
    git(served, "commit", "-qm", "a module named like a dependency")
    data = started(served, start_daemon)
    assert data["extra"]["daemon"] is True
    assert data["languages"]["python"] == 1


def test_a_query_longer_than_the_daemons_request_line_is_cut_not_refused(
    code_served: tuple[Path, str, str], start_daemon: Callable[..., Path]
) -> None:
    # The daemon reads a request line of up to 1 MiB: a pasted log of 1.5 MB was refused,
    # exit 8 ("the index itself failed"); it is cut in the middle, start and end kept.
    repo, _, _ = code_served
    started(repo, start_daemon)
    text = "place an order\n" + "log line of nothing\n" * 80_000 + "Shelf.place_order failed\n"
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "nexusd", "code", "search", "-", "--json"],
        cwd=repo,
        env=nexusd_env(),
        input=text,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert "no daemon running" not in proc.stderr
    assert data["hits"][0]["path"] == "pkg/shelf.py"
    assert data["note"].startswith("the query was too long: ")


HOLD_LOCK = """
import time
from nexusd.code.service import CodeIndex
from nexusd.config import load_config
from nexusd.paths import find_repo

with CodeIndex(find_repo(), load_config()).store.writing():
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_read_during_the_first_build_is_not_said_to_miss_recent_changes(
    code_served: tuple[Path, str, str],
) -> None:
    # A read waits for the first build as for any update; when it could not, it said "files
    # changed in the last seconds are not in these results yet" though nothing had changed.
    repo, _, _ = code_served
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK], cwd=repo, env=nexusd_env(), stdout=subprocess.PIPE
    )
    link = CodeLink(find_repo(repo), load_config(repo), logging.getLogger("test"))
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        link.start()  # its first build waits for the lock another process holds
        answer = link.handle({"op": "code_search", "query": "place an order"})
        assert answer is not None and answer["ok"] and answer["note"]
        assert "changed in the last seconds" not in answer["note"]
    finally:
        holder.kill()
        holder.wait()
        link.stop()
