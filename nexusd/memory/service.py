"""MemoryService: the memory hub as the daemon runs it (one per repository, start/stop).

start() opens the index and returns at once: the model loads in a background
thread and a reconcile thread brings the index in line with the markdown (first
with stored vectors only, again once the model is ready). sync_paths() is what
the watcher calls; search() never waits for the model (keyword-only meanwhile,
and the results say so). An index that cannot be read is rebuilt from the
markdown, with one log line.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from nexusd.config import Config
from nexusd.errors import IndexStoreError
from nexusd.lance import index_uri, local_folder
from nexusd.memory.embedder import Embedder, shared_embedder
from nexusd.memory.filters import Filters
from nexusd.memory.freshness import MemoryStats, compute_stats
from nexusd.memory.search import SearchResults, SearchSettings, run_search, run_searches
from nexusd.memory.sources import is_memory_path, relative
from nexusd.memory.store import MemoryStore
from nexusd.memory.sync import Progress, Syncer, SyncReport
from nexusd.memory.vector_cache import VectorCache
from nexusd.memory.writer import readable, table_state, write_guard
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.memory")
T = TypeVar("T")
RECONCILE_THREAD = "nexusd-memory-reconcile"
CLEANUP_OLDER_THAN = timedelta(minutes=5)
FIRST_SYNC_WAIT_SECONDS = 10.0
# Each incremental sync adds a fragment, and every search pays for every fragment (41 small
# fragments made a search 4x slower than one compacted fragment); compacting a few dozen
# takes ~50 ms (more on a big table), so a long-running service compacts after this many
# writing syncs (`compact_if_due`), outside the sync itself.
WRITES_BEFORE_OPTIMIZE = 8


class MemoryService:
    """Sync, search and maintain one repository's memory index."""

    def __init__(
        self, layout: RepoLayout, config: Config, *, embedder: Embedder | None = None
    ) -> None:
        self.layout = layout
        self.config = config
        self.embedder = embedder or shared_embedder(config.memory.model)
        self.store = MemoryStore(index_uri(layout, config))
        self.guard = write_guard(self.store.uri)
        self.syncer = Syncer(layout.root, config, self.store, self.embedder)
        self.settings = SearchSettings.from_config(config)
        self.vectors = VectorCache(config.memory.search.cache_max_rows)
        self.last_report: SyncReport | None = None
        self.writes_since_optimize = 0
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._opened = False
        self._first_sync = threading.Event()  # cleared while the start-up reconcile runs
        self._first_sync.set()

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, *, background: bool = True, load_model: bool = True) -> None:
        """Open the index, start loading the model, reconcile (in the background by default).

        `load_model=False` (a keyword search without a daemon): the index is reconciled with
        the vectors it has, and the model is neither imported nor loaded.
        """
        self._stop.clear()
        if load_model:
            self.embedder.start_loading()
        self.open()
        if not background:
            self._reconcile_loop()
            return
        self._first_sync.clear()
        self._thread = threading.Thread(
            target=self._reconcile_loop, name=RECONCILE_THREAD, daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the reconcile thread and wait for the model loader."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.embedder.join(timeout)

    def _reconcile_loop(self) -> None:
        try:
            try:
                report = self.reconcile()
            finally:
                self._first_sync.set()
            if self.embedder.status == "not loaded":
                return  # started without the model: nothing to wait for
            while not self._stop.is_set() and not self.embedder.wait(0.2):
                if self.embedder.status == "unavailable":
                    return
            if self._stop.is_set() or not self.embedder.ready:
                return
            if report.pending or self.store.dim != self.embedder.dim:
                self.reconcile()
        except Exception:  # the daemon carries on; the next reconcile retries
            log.exception("memory reconcile failed")

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait for the start-up reconcile to finish; True when the model is ready too."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.embedder.ready

    # -- index access with recovery ----------------------------------------------------
    def open(self) -> None:
        """Open (or create) the index; a corrupt one is rebuilt."""
        with self._lock:
            dim = self.embedder.dim if self.embedder.ready else None
            self.guard.observe()
            try:
                self.store.open(dim)
            except IndexStoreError as exc:
                self._rebuild(exc)
            self._opened = True

    def _follow(self) -> None:
        """Open the table afresh when another process wrote it since this one looked."""
        if self._opened and self.guard.changed():
            self._opened = False
            self.open()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """This thread alone, and this process alone, writes the index meanwhile; other
        processes are told when it changed."""
        with self._lock, self.guard.holding():
            self._follow()
            before = table_state(self.store)
            try:
                yield
            finally:
                if table_state(self.store) != before:
                    self.guard.wrote()

    def _rebuild(self, why: Exception) -> None:
        log.warning(
            "memory index at %s is unreadable (%s); rebuilding it from the markdown",
            self.store.uri,
            str(why).splitlines()[0],
        )
        with self.guard.holding():
            self.store.destroy()
            self.store.open(self.embedder.dim if self.embedder.ready else None)
            self.last_report = self.syncer.sync([], everything=True)
            self.guard.wrote()

    def _prepare(self) -> None:
        if not self._opened:
            self.open()
        if self.embedder.ready and self.store.dim != self.embedder.dim:
            self.store.open(self.embedder.dim)
        local = local_folder(self.store.uri)
        if local is not None and not local.exists():
            self._rebuild(FileNotFoundError("the index directory was deleted"))

    def _guarded(self, action: Callable[[], T]) -> T:
        """Run a writer (sync, reindex, optimize, stats) alone, rebuilding a broken index."""
        with self._writing():
            self._prepare()
            try:
                return action()
            except IndexStoreError as exc:
                self._rebuild(exc)
                return action()

    def _reader(self, action: Callable[[], T]) -> T:
        """Run a search without waiting for writers; on failure retry once they are done."""
        # A request answered as the daemon starts must see the memory the markdown holds:
        # wait for the start-up reconcile (quick, it embeds nothing while the model loads).
        self._first_sync.wait(FIRST_SYNC_WAIT_SECONDS)
        local = local_folder(self.store.uri)
        missing = local is not None and not local.exists()
        if missing or not self._opened or self.store.dim != (self.embedder.dim or self.store.dim):
            with self._lock:
                self._prepare()
        if self.guard.changed():
            with self._lock:
                self._follow()
        try:
            return action()
        except IndexStoreError:
            pass
        # A reindex may have swapped the table under us: wait for it, then try again.
        with self._writing():
            self._prepare()
            try:
                return action()
            except IndexStoreError as exc:
                if readable(self.store):
                    # The table is sound and this search failed: a rebuild would only
                    # throw away every vector (and a quoted query once did just that).
                    raise
                self._rebuild(exc)
                return action()

    # -- the API the daemon uses -------------------------------------------------------
    def is_memory_path(self, path: Path) -> bool:
        """True when a watcher event on `path` concerns memory."""
        return is_memory_path(self.layout.root, self.config, path)

    def sync_paths(self, paths: Iterable[Path | str]) -> SyncReport:
        """Incremental sync of changed, created or deleted memory files."""
        rels = sorted(
            {
                rel
                for p in paths
                if (rel := relative(self.layout.root, Path(p))) is not None
                and self.is_memory_path(Path(p))
            }
        )
        if not rels:
            return SyncReport()
        report = self._guarded(lambda: self.syncer.sync(rels))
        self.last_report = report
        if report.written or report.removed:
            self.writes_since_optimize += 1
            self._refresh_vectors()
        return report

    def _refresh_vectors(self) -> None:
        """Bring the in-memory vectors up to the table just written, so the next search does
        not pay for it (a search would rebuild them anyway)."""
        try:
            self.vectors.refresh(self.store)
        except IndexStoreError:  # the index is not open: the next search opens and reads it
            log.debug("memory vectors not refreshed", exc_info=True)

    def compact_if_due(self) -> bool:
        """Optimize once WRITES_BEFORE_OPTIMIZE writing syncs have piled up; True if it ran.

        Called after a sync has returned, so what it wrote is searchable while compacting.
        """
        if self.writes_since_optimize < WRITES_BEFORE_OPTIMIZE:
            return False
        self.optimize()
        return True

    def reconcile(self) -> SyncReport:
        """Compare every memory file with the index and fix the drift."""
        report = self._guarded(lambda: self.syncer.sync([], everything=True))
        self.last_report = report
        if report.written or report.removed:
            self._refresh_vectors()
            log.info(
                "memory reconcile: %d chunks written, %d removed, %d embedded",
                report.written,
                report.removed,
                report.embedded,
            )
        return report

    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Drop the index and rebuild it from the markdown."""
        with self._writing():
            self.store.destroy()
            self.store.open(self.embedder.dim if self.embedder.ready else None)
            self._opened = True
            report = self.syncer.sync([], everything=True, progress=progress)
            self.store.optimize(CLEANUP_OLDER_THAN)
            self.last_report = report
        self._refresh_vectors()
        return report

    def search(
        self,
        query: str,
        k: int | None = None,
        mode: str | None = None,
        *,
        category: str | None = None,
        path_glob: str | None = None,
        since: str | None = None,
        until: str | None = None,
        categories: Sequence[str] | None = None,
        hidden_categories: Sequence[str] = (),
    ) -> SearchResults:
        """Search memory; keyword-only (and saying so) while the model is unavailable.

        `categories`: only chunks of these categories (None: any); `hidden_categories`:
        never chunks of these (together, what a caller's role may read)."""
        filters = Filters(
            category=category,
            path_glob=path_glob,
            since=since,
            until=until,
            categories=None if categories is None else tuple(categories),
            hidden_categories=tuple(hidden_categories),
        )
        return self._reader(
            lambda: run_search(
                self.store,
                self.embedder,
                query,
                k=k or self.config.memory.search.k,
                mode=mode or self.config.memory.search.mode,
                filters=filters,
                settings=self.settings,
                cache=self.vectors,
            )
        )

    def search_many(
        self, queries: Sequence[tuple[str, int | None]], mode: str | None = None
    ) -> list[SearchResults]:
        """Several searches at once: one embedding batch and one vector scan for all."""
        k = self.config.memory.search.k
        return self._reader(
            lambda: run_searches(
                self.store,
                self.embedder,
                [(query, n or k) for query, n in queries],
                mode=mode or self.config.memory.search.mode,
                filters=Filters(),
                settings=self.settings,
                cache=self.vectors,
            )
        )

    def get(self, chunk_id: str) -> dict[str, Any] | None:
        """One chunk by its id (path, heading, body, lines, category, tags, date), or None."""
        return self._reader(lambda: self.store.get(chunk_id))

    def optimize(self) -> dict[str, int]:
        """Compact fragments, update the indexes, drop old versions (the scheduled job)."""

        def run() -> dict[str, int]:
            self.store.optimize(CLEANUP_OLDER_THAN)
            self.writes_since_optimize = 0
            return self.store.stats()

        stats = self._guarded(run)
        self._refresh_vectors()
        return stats

    def stats(self) -> MemoryStats:
        """Files, chunks, drift, fragments and model status."""
        return self._guarded(lambda: compute_stats(self.syncer, self.store, self.embedder))

    def describe(self) -> dict[str, Any]:
        """Model and index summary for status displays."""
        return {"index_uri": self.store.uri, **self.embedder.describe()}
