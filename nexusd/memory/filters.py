"""Search filters: as a LanceDB prefilter, and as the same predicates over column values.

The in-memory vector search (`vector_cache`) must find exactly the rows the LanceDB
prefilter lets through, so each SQL clause of `Filters.where` has its Python twin here,
with SQL's null semantics: a null value passes no comparison, `NOT IN` included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from nexusd.errors import NexusError
from nexusd.memory.sources import glob_regex
from nexusd.memory.store import sql_str


@dataclass(frozen=True)
class Filters:
    """Restrictions on what may be found."""

    category: str | None = None
    path_glob: str | None = None
    since: str | None = None
    until: str | None = None
    # A caller's role: only these categories (None: any), never those hidden.
    categories: tuple[str, ...] | None = None
    hidden_categories: tuple[str, ...] = ()

    def where(self) -> str | None:
        """A LanceDB prefilter for these filters (path globs are rechecked exactly later)."""
        parts: list[str] = []
        if self.category:
            parts.append(f"category = {sql_str(self.category.strip().lower())}")
        if self.categories is not None:
            parts.append(f"category IN ({', '.join(sql_str(c) for c in self._allowed())})")
        if self.hidden_categories:
            hidden = ", ".join(sql_str(c) for c in self._hidden())
            parts.append(f"category NOT IN ({hidden})")
        if self.since:
            parts.append(f"date >= {sql_str(_day(self.since))}")
        if self.until:
            parts.append(f"date <= {sql_str(_day(self.until))}")
        if self.path_glob:
            parts.append(f"path LIKE {sql_str(self._like())}")
        return " AND ".join(parts) or None

    def keep(self, path: str) -> bool:
        """Exact glob check (LIKE is only a superset)."""
        return not self.path_glob or bool(glob_regex(self.path_glob.lstrip("./")).match(path))

    # -- the same clauses as predicates (None is SQL's null) ---------------------------
    @property
    def on_category(self) -> bool:
        """True when some clause reads the category."""
        return bool(self.category) or self.categories is not None or bool(self.hidden_categories)

    @property
    def on_date(self) -> bool:
        """True when some clause reads the date."""
        return bool(self.since or self.until)

    def category_passes(self, value: str | None) -> bool:
        """What the category clauses of `where()` say of a row with this category."""
        if value is None:
            return not self.on_category
        if self.category and value != self.category.strip().lower():
            return False
        if self.categories is not None and value not in self._allowed():
            return False
        return value not in self._hidden()

    def date_passes(self, value: str | None) -> bool:
        """What the date clauses of `where()` say of a row with this date."""
        if value is None:
            return not self.on_date
        if self.since and value < _day(self.since):
            return False
        return not (self.until and value > _day(self.until))

    def path_passes(self, value: str | None) -> bool:
        """What the LIKE clause of `where()` says of a row with this path."""
        if not self.path_glob:
            return True
        return value is not None and bool(like_regex(self._like()).match(value))

    def _allowed(self) -> list[str]:
        # An empty role list still needs a valid IN list: '' matches no real category.
        return sorted({c.strip().lower() for c in self.categories or ()}) or [""]

    def _hidden(self) -> list[str]:
        return sorted({c.strip().lower() for c in self.hidden_categories})

    def _like(self) -> str:
        assert self.path_glob is not None
        return self.path_glob.replace("**", "*").replace("*", "%").replace("?", "_")


def _day(text: str) -> str:
    try:
        return date.fromisoformat(text.strip()[:10]).isoformat()
    except ValueError as exc:
        raise NexusError(f"not a date: {text!r}", hint="write dates as YYYY-MM-DD") from exc


@lru_cache(maxsize=64)
def like_regex(pattern: str) -> re.Pattern[str]:
    """SQL LIKE as an anchored, case-sensitive regex: `%` any run, `_` one character,
    a backslash makes the next character literal."""
    out: list[str] = []
    chars = iter(pattern)
    for ch in chars:
        if ch == "\\":
            out.append(re.escape(next(chars, "\\")))
        else:
            out.append({"%": ".*", "_": "."}.get(ch, re.escape(ch)))
    return re.compile("".join(out) + r"\Z", re.DOTALL)
