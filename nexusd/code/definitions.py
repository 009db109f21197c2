"""Which units define the names a request may use, name by name, for the definition signal.

A function defined inside a function (a closure, a test's helper) is nobody's name outside
it: a report's `compat=` names no `DataArray._all_compat.compat`. A function a function sets
on an object (`proto.week = function …` in a dayjs plugin's factory) is a method the plugin
adds: it defines its name, unless something else does, since then it overrides that
(`proto.format` wraps the class's `Dayjs.format`).
"""

from __future__ import annotations

from collections.abc import Sequence

from nexusd.code.units import CodeUnit

_RUNNABLE = frozenset({"function", "method"})


class Definitions:
    """Name → the entries (indexes of `units`) defining it, exactly and case-blind."""

    def __init__(self, units: Sequence[CodeUnit], file_entries: Sequence[range]) -> None:
        local, attached = _nested(units, file_entries)
        self.exact: dict[str, list[int]] = {}
        self.lower: dict[str, list[int]] = {}
        for e, unit in enumerate(units):
            if e not in local and e not in attached:
                self.exact.setdefault(unit.name, []).append(e)
                self.lower.setdefault(unit.name.lower(), []).append(e)
        added: dict[str, list[int]] = {}
        for e in sorted(attached):
            if units[e].name not in self.exact:
                added.setdefault(units[e].name, []).append(e)
        for name, found in added.items():
            self.exact[name] = found
            self.lower.setdefault(name.lower(), found)


def _nested(units: Sequence[CodeUnit], file_entries: Sequence[range]) -> tuple[set[int], set[int]]:
    """Entries defined directly inside a function or method of their file; and those a
    function there sets on an object (their parent is no unit, a scope above it is one)."""
    local: set[int] = set()
    attached: set[int] = set()
    for entries in file_entries:
        kinds = {units[e].qualname: units[e].kind for e in entries}
        functions = {qualname for qualname, kind in kinds.items() if kind in _RUNNABLE}
        for e in entries:
            parent = units[e].qualname.rpartition(".")[0]
            # A method set on a function's object (`Runner.prototype.stop`, an ES5
            # constructor's `this.run`) is no closure of that function.
            if parent in functions and units[e].kind != "method":
                local.add(e)
            elif parent not in kinds and any(scope in functions for scope in _scopes(parent)):
                attached.add(e)
    return local, attached


def _scopes(qualname: str) -> list[str]:
    """`a.b.c` → `a`, `a.b`: the scopes a dotted name is written inside."""
    parts = qualname.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]
