"""A member named with its owner: `Config.from_file`, `Cache::get`, `Order->create`,
`Cart#total`. The name alone may be defined by many classes (`get`, `save`, `update`); with
its owner it is one method, and the file that defines it is named more surely than by
either word."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

# An owner is a class's name (capitalised), its member any name, Ruby's `save!` included.
_PAIR = re.compile(r"\b([A-Z][A-Za-z0-9_]*)(?:\.|::|->|#)([A-Za-z_][A-Za-z0-9_]*[?!]?)")


class _Entry(Protocol):
    @property
    def unit(self) -> _Unit: ...


class _Unit(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def qualname(self) -> str: ...


def owner_members(text: str) -> Counter[str]:
    """`Owner.member` keys of the pairs a text writes, in any language's spelling."""
    return Counter(f"{m.group(1)}.{m.group(2)}" for m in _PAIR.finditer(text))


class QualifiedIndex:
    """`Owner.member` (a unit's qualname's last two parts) → the entries so named."""

    def __init__(self, entries: Sequence[_Entry]) -> None:
        self._entries: dict[str, list[int]] = {}
        for e, entry in enumerate(entries):
            parts = entry.unit.qualname.rsplit(".", 2)
            if entry.unit.kind != "file" and len(parts) >= 2:
                self._entries.setdefault(f"{parts[-2]}.{parts[-1]}", []).append(e)

    def get(self, key: str) -> list[int]:
        """The entries whose qualname ends with `key`."""
        return self._entries.get(key, [])
