"""LanceDB imported without running the REST namespace client's package init."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from nexusd.lance import REST_CLIENT, import_lancedb
import pyarrow as pa

lancedb = import_lancedb()
db = lancedb.connect(sys.argv[1])
table = db.create_table("t", pa.table({"a": [1, 2, 3]}))
rows = table.search().where("a > 1").to_arrow().num_rows
print(rows, f"{REST_CLIENT}.api" in sys.modules)
client = sys.modules[REST_CLIENT]
print(client.ApiClient.__name__, f"{REST_CLIENT}.api" in sys.modules)
from lance_namespace_urllib3_client import Configuration
print(Configuration.__name__)
"""

SUBMODULE_FIRST = """
import sys
from nexusd.lance import REST_CLIENT, import_lancedb

import_lancedb()
print(f"{REST_CLIENT}.api" in sys.modules)
import lance_namespace_urllib3_client.api_client as api_client
from lance_namespace_urllib3_client.api.namespace_api import NamespaceApi
print(api_client.ApiClient.__name__, NamespaceApi.__name__)
"""


def test_lancedb_works_without_the_rest_client_which_still_loads_when_asked(
    tmp_path: Path,
) -> None:
    """The tables work with the REST API modules never imported; asking the package for a
    name runs its init, so code that uses the client still gets it whole."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "db")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert out[:3] == ["2 False", "ApiClient True", "Configuration"]


def test_an_already_imported_lancedb_is_left_as_it_is() -> None:
    """A process that imported lancedb itself gets the same module back."""
    import lancedb

    from nexusd.lance import import_lancedb

    assert import_lancedb() is lancedb


def test_importing_a_rest_submodule_first_runs_the_package_init_before_it() -> None:
    """`import …api_client` (a REST user's first line) gets a complete package, not a
    partially initialised one (found by review)."""
    out = subprocess.run(
        [sys.executable, "-c", SUBMODULE_FIRST],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert out[:2] == ["False", "ApiClient NamespaceApi"]


def test_a_write_guard_is_reentrant_in_a_thread_and_excludes_other_threads(
    tmp_path: Path,
) -> None:
    import threading

    from nexusd.lance import WriteGuard

    guard = WriteGuard(str(tmp_path / "index"), "t.lock", "t.generation")
    waited = threading.Event()
    entered = threading.Event()

    def other() -> None:
        with guard.holding(on_wait=waited.set):
            entered.set()

    with guard.holding(), guard.holding():  # the same thread again: no deadlock
        thread = threading.Thread(target=other)
        thread.start()
        assert waited.wait(10)  # another thread waits for the lock, as another process does
        assert not entered.is_set()
        guard.wrote()
    thread.join(10)
    assert entered.is_set() and not thread.is_alive()
    assert not guard.changed()  # this process wrote it
    WriteGuard(str(tmp_path / "index"), "t.lock", "t.generation").wrote()
    assert guard.changed()  # another writer did
