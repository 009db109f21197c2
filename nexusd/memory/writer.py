"""The memory index's write lock across processes (`lance.WriteGuard`), and what tells a
writer whether it wrote and a failed search whether the table itself is sound.

Without the lock, `nexusd memory search` run three times at once on a new index (no
daemon) stored most chunks two or three times: each process saw no rows, and each
inserted them all. A process that sees the generation change opens the table afresh before
it reads or writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexusd.lance import WriteGuard

if TYPE_CHECKING:
    from nexusd.memory.store import MemoryStore

# Beside the table (the open lock is `store.LOCK_FILE`: a writer may open the table too).
WRITE_LOCK = "memory-write.lock"
GENERATION_FILE = "memory.generation"


def write_guard(uri: str) -> WriteGuard:
    """The memory index's write lock and generation at `uri`."""
    return WriteGuard(uri, WRITE_LOCK, GENERATION_FILE)


def table_state(store: MemoryStore) -> tuple[int, int] | None:
    """(which table object, its version): changes whenever this process writes the table."""
    try:
        table = store.table
        return id(table), int(table.version)
    except Exception:  # not open, or unreadable: the caller rebuilds or reports it
        return None


def readable(store: MemoryStore) -> bool:
    """True when the table can be counted and scanned: sound, whatever else failed."""
    try:
        store.table.count_rows()
        store.table.search().select(["id"]).limit(1).to_list()
        return True
    except Exception:
        return False
