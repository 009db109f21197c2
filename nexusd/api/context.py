"""The context API as a library: search, ingest, get and categories, filtered by role.

The HTTP routes and the MCP memory tools are thin adapters over `Context`. Memory is
markdown first: an ingest writes one entry into MEMORY.md under its category's
`## Heading` (or into today's daily note for `daily`) through the locked, re-reading
writers of `nexusd.memory.writes`, then indexes that file; concurrent ingests each land
once. A role sees only the chunks of categories it may read, and a category it may not
touch is refused (403) before anything is read or written.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from nexusd.api.backend import Backend
from nexusd.api.roles import Access, role_hint
from nexusd.config import Config
from nexusd.errors import AccessError, NexusError
from nexusd.memory.chunking import chunk_markdown
from nexusd.memory.daily import daily_path
from nexusd.memory.writes import add_memory, format_entry
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.api")
MAX_LIMIT = 100
MAX_OFFSET = 1000
MAX_CONTENT_CHARS = 20_000
MAX_RECENT_DAYS = 36_500
# Hits are counted up to the furthest a page can reach, so `total` is the true count for
# every page a client can ask for (and the ranking is the same on every page).
TOTAL_CAP = MAX_OFFSET + MAX_LIMIT


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _hit(hit: Any) -> dict[str, Any]:
    return {
        "id": hit.id,
        "path": hit.path,
        "line_start": hit.line_start,
        "line_end": hit.line_end,
        "citation": hit.citation,
        "heading": hit.heading,
        "snippet": hit.snippet,
        "score": hit.score,
        "category": hit.category,
        "date": hit.date,
        "tags": list(hit.tags),
    }


class Context:
    """One repository's memory as the API serves it, for callers with roles."""

    def __init__(self, layout: RepoLayout, config: Config, backend: Backend) -> None:
        self.layout = layout
        self.config = config
        self.backend = backend
        self.access = Access.from_config(config)

    def _view(self, role: str) -> dict[str, Any]:
        """The search filter of what `role` may read."""
        if self.access.sees_other_categories(role):
            hidden = sorted(set(self.access.categories) - set(self.access.readable(role)))
            return {"hidden_categories": hidden or None}
        return {"categories": list(self.access.readable(role))}

    def search(
        self,
        role: str,
        query: str,
        *,
        limit: int = 10,
        offset: int = 0,
        category: str | None = None,
        recent_days: int | None = None,
        since: str | None = None,
    ) -> dict[str, Any]:
        """Hits the role may read: `{results, total, more, offset, limit, note, query_time_ms}`;
        `total` counts every hit (up to TOTAL_CAP), `more` says whether any follow this page."""
        started = time.perf_counter()
        if not query.strip():
            raise AccessError("the query is empty", hint="say what to look for", status=400)
        if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
            raise AccessError(
                f"limit must be 1..{MAX_LIMIT} and offset 0..{MAX_OFFSET}",
                hint="page with a smaller limit",
                status=400,
            )
        view = self._view(role)
        if category:
            view = {"category": self.access.require_category(role, category)}
        if recent_days is not None:
            if not 0 <= recent_days <= MAX_RECENT_DAYS:
                raise AccessError(
                    f"recent_days must be 0..{MAX_RECENT_DAYS}, got {recent_days}",
                    hint="leave it out to search every date",
                    status=400,
                )
            since = (date.today() - timedelta(days=max(recent_days, 0))).isoformat()
        found = self.backend.search(query, k=TOTAL_CAP, since=since, **view)
        total = len(found.hits)
        return {
            "query": query,
            "results": [_hit(h) for h in found.hits[offset : offset + limit]],
            "total": total,
            "more": offset + limit < total,
            "offset": offset,
            "limit": limit,
            "mode": found.mode,
            "note": found.note,
            "query_time_ms": _elapsed_ms(started),
        }

    def get(self, role: str, chunk_id: str) -> dict[str, Any]:
        """One chunk the role may read; 404 when there is none, 403 when it may not."""
        started = time.perf_counter()
        chunk = self.backend.get(chunk_id)
        if chunk is None:
            raise AccessError(
                f"no memory chunk has the id {chunk_id!r}",
                hint="take ids from a search's results",
                status=404,
            )
        need = self.access.required_for(str(chunk.get("category") or ""))
        if not self.access.includes(role, need):
            raise AccessError(
                f"role {role!r} may not read this chunk: its category "
                f"{chunk.get('category')!r} requires role {need!r}",
                hint=role_hint(need),
                status=403,
            )
        return {**chunk, "query_time_ms": _elapsed_ms(started)}

    def ingest(
        self,
        role: str,
        content: str,
        category: str,
        *,
        source: str | None = None,
        tags: Sequence[str] = (),
    ) -> dict[str, Any]:
        """Write one entry into the markdown, index it, and say where it went."""
        started = time.perf_counter()
        name = self.access.require_category(role, category)
        text = content.strip()
        if not text or len(text) > MAX_CONTENT_CHARS:
            raise AccessError(
                f"content must be 1..{MAX_CONTENT_CHARS} characters",
                hint="split a long text into several entries",
                status=400,
            )
        for value in (content, source or "", *tags):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise AccessError(
                    f"the entry is not valid text: {exc.reason} at character {exc.start}",
                    hint="send UTF-8 text (a lone surrogate such as \\ud800 is not)",
                    status=400,
                ) from exc
        if source:
            text += f"\n(source: {' '.join(source.split())})"
        now = datetime.now()
        try:
            entry = format_entry(text, tags, now)
        except NexusError as exc:
            raise AccessError(exc.message, hint=exc.hint, status=400) from exc
        daily = name == "daily"
        self._check_room(daily_path(self.layout, now) if daily else self.layout.memory_file, entry)
        self.backend.require_memory()  # refused before anything is written: retries are safe
        path = add_memory(self.layout, text, category=name, tags=tags, daily=daily, when=now)
        rel = path.relative_to(self.layout.root.resolve()).as_posix()
        line, chunk_id = self._locate(path, rel, entry)
        out: dict[str, Any] = {"path": rel, "line": line, "category": name, "indexed": False}
        try:
            self.backend.sync([path])
            indexed = bool(chunk_id) and self.backend.get(chunk_id) is not None
        except NexusError as exc:
            log.warning("ingest wrote %s:%d but could not index it: %s", rel, line, exc)
            indexed = False
        if indexed:
            out = {"id": chunk_id, **out, "indexed": True}
        else:
            out["note"] = (
                "written but not indexed (see `nexusd memory status`): search will not find it"
                " until the file is indexed"
            )
        return {**out, "query_time_ms": _elapsed_ms(started)}

    def _check_room(self, path: Path, entry: str) -> None:
        """400 when adding `entry` would push `path` over memory.max_file_bytes (a file over
        it is no longer indexed at all)."""
        limit = self.config.memory.max_file_bytes
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        added = len(entry.encode("utf-8")) + 64  # the entry, a heading and blank lines
        if size + added > limit:
            raise AccessError(
                f"{path.name} is {size} bytes: this entry would take it over"
                f" memory.max_file_bytes ({limit}), and a file over it is not indexed",
                hint="move old entries out of it (or raise memory.max_file_bytes)",
                status=400,
            )

    def _locate(self, path: Path, rel: str, entry: str) -> tuple[int, str]:
        """The line of the entry just written (its last copy) and the chunk holding it."""
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        head = entry.split("\n", 1)[0]
        line = max((i + 1 for i, found in enumerate(lines) if found == head), default=0)
        chunks = chunk_markdown(
            rel,
            text,
            max_chars=self.config.memory.chunk_max_chars,
            default_date=date.today().isoformat(),
        )
        for chunk in chunks:
            if chunk.line_start <= line <= chunk.line_end:
                return line, chunk.id
        return line, ""

    def categories(self, role: str) -> dict[str, Any]:
        """Every category, the role it requires and whether `role` may touch it."""
        rows = [
            {"name": name, "required_role": need, "allowed": self.access.includes(role, need)}
            for name, need in sorted(self.access.categories.items())
        ]
        return {"role": role, "categories": rows, "other_categories": self.access.other_categories}
