"""A member named with its owner: `Config.from_file`, `Cache::get`, `Order->create`,
`Cart#total`. The name alone may be defined by many classes (`get`, `save`, `update`); with
its owner it is one method, and the file that defines it is named more surely than by
either word."""

from __future__ import annotations

import re
from collections.abc import Sequence

from nexusd.code.units import CodeUnit

# An owner is a class's name (capitalised), its member any name, Ruby's `save!` included.
_PAIR = re.compile(r"\b([A-Z][A-Za-z0-9_]*)(?:\.|::|->|#)([A-Za-z_][A-Za-z0-9_]*[?!]?)")


def owner_members(text: str) -> list[str]:
    """`Owner.member` keys of the pairs a text writes, in any language's spelling, once each."""
    return list(dict.fromkeys(f"{m.group(1)}.{m.group(2)}" for m in _PAIR.finditer(text)))


class QualifiedIndex:
    """`Owner.member` (a unit's qualname's last two parts) → the entries so named."""

    def __init__(self, units: Sequence[CodeUnit]) -> None:
        """`units`: the corpus's entries' units, in entry order."""
        self._entries: dict[str, list[int]] = {}
        for e, unit in enumerate(units):
            parts = unit.qualname.rsplit(".", 2)
            if unit.kind != "file" and len(parts) >= 2:
                self._entries.setdefault(f"{parts[-2]}.{parts[-1]}", []).append(e)

    def get(self, key: str) -> list[int]:
        """The entries whose qualname ends with `key`."""
        return self._entries.get(key, [])
