"""CodeIndex: the code index of one repository, kept fresh by git blob id, searched in memory.

`update()` lists the files git knows (working-tree edits included), parses only the
(path, blob) pairs not stored yet, writes them to LanceDB and swaps in a new in-memory
corpus. Searches read whatever corpus is current and never wait for an update; while a
first build runs they see the part already parsed, and the results say so.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from nexusd.code.corpus import Corpus, TokenCache
from nexusd.code.importable import import_lines
from nexusd.code.query import mine
from nexusd.code.rank import TESTS_NAMED, FileHit, Ranking, executed_signal, ranking
from nexusd.code.reader import collector_paused, parse_many
from nexusd.code.selection import RepoFile, Selected, Selection, list_files, worktree_attributes
from nexusd.code.status import (
    SHOWN_PROBLEMS,
    CodeStatus,
    UpdateReport,
    skipped_lines,
    skipped_summary,
)
from nexusd.code.store import CodeStore
from nexusd.code.units import CodeUnit, ParsedFile, normalize_path
from nexusd.config import Config
from nexusd.errors import IndexStoreError
from nexusd.lance import index_uri
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.code")
# While a first build runs, searches get a partial corpus rebuilt after this many files.
PARTIAL_EVERY = 2000
# Parsed files are written to LanceDB this many at a time.
STORE_BATCH = 512

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CodeResults:
    """Ranked files for one query, and a note when the index was incomplete."""

    hits: tuple[FileHit, ...]
    note: str | None = None
    query_ms: float = 0.0
    tests: tuple[FileHit, ...] = ()  # the best tests of the whole ranking, for the test step


def _release_free_memory() -> None:
    """Hand the heap a build freed back to the OS (glibc keeps it otherwise: a daemon that
    built sympy's index held ~150 MB of freed row dicts and counters)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class CodeIndex:
    """Update, search and describe one repository's code index (thread-safe)."""

    def __init__(self, layout: RepoLayout, config: Config) -> None:
        self.layout = layout
        self.config = config
        self.store = CodeStore(index_uri(layout, config))
        self.selection = Selection.from_config(layout, config)
        self.max_bytes = config.code.max_file_bytes
        self.workers = config.code.workers or (os.cpu_count() or 1)
        self._files: dict[str, tuple[str, ParsedFile]] = {}  # path → (blob, parsed)
        self._skipped: dict[str, str] = {}  # path → reason
        self._generated = frozenset[str]()  # paths `.gitattributes` marks linguist-generated
        self._tokens = TokenCache()
        self._corpus: Corpus | None = None
        self._lock = threading.Lock()
        self._opened = False
        self.progress: tuple[int, int] | None = None  # (parsed, to parse) while updating
        self.last_update: UpdateReport | None = None
        self.complete = False
        self._settled = threading.Event()  # set once an update has ended

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        """Load what is stored (no parsing); searches work from here on."""
        with self._lock, collector_paused():
            if self._opened:
                return
            # Not under the write lock: a reader sees what is stored so far and never waits
            # for a build; rows written meanwhile change the generation, and `update` reloads.
            try:
                self.store.observe()
                self._load()
            except IndexStoreError:
                # Read while another process dropped the tables (`reindex`): read again once
                # it is done.
                with self.store.writing():
                    self._load()
            self._rebuild()
            self._opened = True

    def _load(self) -> None:
        """What is stored, in place of what this process holds (tables reopened: LanceDB
        shows a table as it was when opened); swapped in whole, so that concurrent lookups
        see the old files or the new ones, never none."""
        files: dict[str, tuple[str, ParsedFile]] = {}
        tokens = TokenCache()
        self.store.open()
        for parsed, blob, terms in self.store.iter_files():
            files[parsed.path] = (blob, tokens.adopt(parsed, terms=terms))
        # The last update's marks: no listing here, and without them a process that only
        # opens the index (the CLI's and the API's read path) ranks generated files as code.
        self._files, self._tokens, self._generated = files, tokens, self.store.generated()

    def reset(self) -> None:
        """Drop the stored tables and everything in memory (then `update` rebuilds)."""
        with self._lock, self.store.writing():
            self.store.drop()
            self.store.open()
            self._files.clear()
            self._tokens = TokenCache()
            self._skipped.clear()
            self._generated = frozenset()
            self._corpus = None
            self.complete = False
            self._settled.clear()
            self.last_update = None
            self._opened = True

    # -- update ---------------------------------------------------------------------------
    def select(self, files: list[RepoFile]) -> Selected:
        """`Selection.select` with this index's settings, on its working tree."""
        root = self.layout.root
        return self.selection.select(files, lambda found: worktree_attributes(root, found))

    def _wanted(self, files: list[RepoFile]) -> tuple[dict[str, tuple[str, str]], bool]:
        """path → (blob, language) of the files to index (the rest noted in `_skipped`), and
        whether `.gitattributes` now marks other files generated than it did."""
        found = self.select(files)
        remarked = found.generated != self._generated
        self._skipped, self._generated = found.skipped, found.generated
        self.store.keep_generated(found.generated)  # for the processes that only open it
        return found.wanted, remarked

    def update(
        self, progress: Progress | None = None, on_wait: Callable[[], None] | None = None
    ) -> UpdateReport:
        """Bring the index in line with the working tree; parse only new (path, blob) pairs.

        `on_wait` is called if another process is updating the index: this one waits for it,
        then parses only what it did not."""
        try:
            return self._update(progress, on_wait)
        finally:
            self._settled.set()  # a search waiting for the first update goes on, done or not

    def wait_settled(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for an update to end (done or failed)."""
        self._settled.wait(timeout)

    def _update(
        self, progress: Progress | None, on_wait: Callable[[], None] | None
    ) -> UpdateReport:
        self.open()
        with self._lock, collector_paused(), self.store.writing(on_wait) as stale:
            start = time.perf_counter()
            if stale:  # another process wrote: start from what it stored, not parse twice
                self._load()
            listed_at = time.time_ns()
            wanted, remarked = self._wanted(list_files(self.layout.root))
            removed = [p for p in self._files if p not in wanted]
            todo = [
                (path, language)
                for path, (blob, language) in wanted.items()
                if self._files.get(path, ("",))[0] != blob
            ]
            for path in removed:
                del self._files[path]
            if removed:
                self.store.remove(removed)
            parsed_count = 0
            self.progress = (0, len(todo))

            def tick(n: int) -> None:
                nonlocal parsed_count
                parsed_count += n
                self.progress = (parsed_count, len(todo))
                if progress:
                    progress(parsed_count, len(todo))

            try:
                self._parse_and_store(todo, wanted, tick)
            finally:
                # Also when the caller stopped the update: what was stored so far stays valid.
                self.progress = None
            if todo:
                self._unkey_changed([path for path, _ in todo], listed_at)
            self.complete = True
            # `.gitattributes` edited, or a new process's corpus opened before any listing:
            # the marked files are re-ranked though not one of them is parsed again.
            if todo or removed or stale or remarked or self._corpus is None:
                self._rebuild()
            # This update's own, not the index's: status lists every file that does not parse.
            parsed = (self._files.get(path) for path, _ in todo)
            errors = sum(1 for got in parsed if got and got[1].status == "syntax-error")
            report = UpdateReport(
                parsed=len(todo),
                removed=len(removed),
                unchanged=len(wanted) - len(todo),
                syntax_errors=errors,
                skipped=len(self._skipped),
                seconds=round(time.perf_counter() - start, 3),
            )
            self.last_update = report
            return report

    def _parse_and_store(
        self,
        todo: list[tuple[str, str]],
        wanted: dict[str, tuple[str, str]],
        tick: Callable[[int], None],
    ) -> None:
        pending = 0
        batch: list[tuple[ParsedFile, str, tuple[str, ...]]] = []
        stale: list[str] = []  # files of the batch whose older rows are stored
        try:
            for chunk in parse_many(self.layout.root, todo, self.max_bytes, self.workers, tick):
                # Stored with the units' packed token counts, so that opening the index
                # later never runs the tokenizer again.
                for p, terms in chunk:
                    blob = wanted[p.path][0]
                    if p.path in self._files:
                        stale.append(p.path)
                    batch.append((p, blob, terms))
                    self._files[p.path] = (blob, self._tokens.adopt(p, terms=terms))
                if len(batch) >= STORE_BATCH:
                    self._store(batch, stale)
                pending += len(chunk)
                if self._corpus is None or (not self.complete and pending >= PARTIAL_EVERY):
                    self._rebuild()  # a first build: searches see the part already parsed
                    pending = 0
        finally:
            # Also when the caller stopped the update: what was parsed so far is stored.
            self._store(batch, stale)

    def _unkey_changed(self, paths: list[str], listed_at: int) -> None:
        """Unkey the `paths` just parsed that were written since the listing began: one
        edited meanwhile was read as it is now but keyed by the old blob, and once back at
        that blob (`git checkout -- f`) never parsed again. They stay searchable as read,
        with no blob and no stored row, so the next update (or process) parses them again.
        A stat each: listing the files again cost as much as a large repository's update.
        (A write in the clock tick the listing began in may be dated before it: missed.)"""
        changed = []
        # A time after now is no write made meanwhile (clock skew, `touch -d`, an archive's
        # dates): it would be parsed again at every update.
        now = time.time_ns()
        for path in paths:
            try:
                written = (self.layout.root / path).lstat().st_mtime_ns
            except OSError:
                continue
            if path in self._files and listed_at <= written <= now:
                changed.append(path)
        if changed:
            log.info("%d files changed while being parsed: parsed again next time", len(changed))
            self.store.remove(changed)
            for path in changed:
                self._files[path] = ("", self._files[path][1])

    def _store(
        self, batch: list[tuple[ParsedFile, str, tuple[str, ...]]], stale: list[str]
    ) -> None:
        """Write a batch of parsed files, replacing the `stale` rows, and empty both lists:
        LanceDB pays per write, not per row."""
        try:
            if stale:
                self.store.remove(stale)
            if batch:
                self.store.add(batch)
        except Exception:
            # What was not stored is not indexed: the next update parses it again and fails
            # as loudly, instead of trusting rows that were never written.
            for p, _, _ in batch:
                self._files.pop(p.path, None)
            raise
        finally:
            batch.clear()
            stale.clear()

    def _rebuild(self) -> None:
        files = [p for _, p in self._files.values()]
        self._corpus = Corpus(files, self._tokens, self._generated)
        _release_free_memory()

    # -- queries --------------------------------------------------------------------------
    @property
    def corpus(self) -> Corpus | None:
        """The current searchable view (None before anything was indexed)."""
        return self._corpus

    def _note(self) -> str | None:
        if self.progress is not None and not self.complete:
            done, total = self.progress
            return f"the code index is still being built ({done} of {total} files parsed)"
        if not self.complete and self._corpus is None and not self._opened:
            return "the code index is still being loaded: ask again in a moment"
        if not self.complete and self._corpus is None:
            return (
                "the code index has not been built yet (a daemon builds it as it starts;"
                " `nexusd code reindex` builds it now)"
            )
        if not self.complete:
            return "the code index has not been brought up to date yet: what it holds may be old"
        return None

    def search(
        self,
        text: str,
        k: int | None = None,
        *,
        title: str = "",
        ran: Mapping[str, Sequence[str]] | None = None,
        ran_lines: Mapping[str, AbstractSet[int]] | None = None,
        recursion: Mapping[str, Sequence[tuple[int, str]]] | None = None,
    ) -> CodeResults:
        """Files and units most likely meant by `text` (a request, a question, a traceback).

        `ran`: the files the request's own code entered (path → some function names);
        `ran_lines`: per file, the first lines of the functions it entered; `recursion`: per
        file, (first line, name) of those a RecursionError it ran into went round."""
        start = time.perf_counter()
        corpus = self._corpus
        limit = k or self.config.code.max_results
        found = Ranking()
        if corpus is not None:
            extra, why = executed_signal(corpus, ran or {}, recursion)
            found = ranking(
                corpus,
                mine(text, title=title),
                k=limit,
                tests=TESTS_NAMED,
                extra=extra,
                why=why,
                ran_lines=ran_lines,
                recursion=recursion,
            )
        ms = round((time.perf_counter() - start) * 1000.0, 3)
        return CodeResults(found.files, self._note(), ms, found.tests)

    def import_lines(self, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """How the repository can bind each of `names` (`importable.import_lines`)."""
        corpus = self._corpus
        return import_lines(corpus, names) if corpus is not None and names else {}

    def symbols(self, path: str) -> tuple[CodeUnit, ...]:
        """The units of one indexed file (empty when it is not indexed)."""
        entry = self._files.get(normalize_path(path))
        return entry[1].units if entry else ()

    def parsed(self, path: str) -> ParsedFile | None:
        """The parsed file at `path`, if indexed."""
        entry = self._files.get(normalize_path(path))
        return entry[1] if entry else None

    def status(self) -> CodeStatus:
        """Counts by language and status, skipped files by reason, progress, last update."""
        # A copy: an update may add files meanwhile (dict() of a dict is atomic under the GIL).
        files = [p for _, p in dict(self._files).values()]
        skipped = dict(self._skipped)
        generated = self._generated
        problems = [
            f"{p.path}: {p.status}" + (f" ({p.note})" if p.note else "")
            for p in sorted(files, key=lambda f: f.path)
            if p.status not in ("ok", "fallback") or p.note
        ]
        return CodeStatus(
            index_uri=self.store.uri,
            files=len(files),
            units=sum(len(p.units) - 1 for p in files),
            languages=dict(Counter(p.language for p in files).most_common()),
            statuses=dict(Counter(p.status for p in files).most_common()),
            problems=tuple(problems[:SHOWN_PROBLEMS]),
            problems_total=len(problems),
            skipped=skipped_summary(skipped),
            skipped_files=skipped_lines(skipped),
            generated=sum(1 for p in files if p.path in generated),
            complete=self.complete,
            progress=self.progress,
            last_update=self.last_update,
        )
