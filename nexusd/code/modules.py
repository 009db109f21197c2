"""Dotted module names as files: what `import pkg.mod` (Python), `import a.b.C;` (Java) and a
report's `pkg.mod.Class` mean.

A name is a module's path without its extension (`pkg/mod.py` → `pkg.mod`), also under a
source root (`src/pkg/mod.py` is `pkg.mod` too). An import resolves among its own language's
files only: beside `util.py`, a `util.php` or `util.js` is no Python module, and
`#include <vector>` is not `vector.py`.
"""

from __future__ import annotations

from collections.abc import Iterable


class ModuleTable:
    """Module name → file, with the suffix and source-root readings of a name."""

    def __init__(self, names: Iterable[tuple[str, int]]) -> None:
        """`names`: (module name, file) pairs; the first file of a name keeps it."""
        self.exact: dict[str, int] = {}
        for name, f in names:
            self.exact.setdefault(name, f)
        self._found: dict[str, int | None] = {}
        self._by_suffix: dict[str, int | None] | None = None
        self._by_root: dict[str, int | None] = {}

    def file(self, dotted: str) -> int | None:
        """The file of a dotted module name, or of its longest prefix that is a module
        (`a.b.C` → `a/b.py` when no `a/b/C` exists); None when none is."""
        try:
            return self._found[dotted]
        except KeyError:
            found = self._found[dotted] = self._find(dotted)
            return found

    def _find(self, dotted: str) -> int | None:
        parts = dotted.split(".")
        while parts:
            name = ".".join(parts)
            found = self.named(name)
            if found is not None:
                return found
            parts.pop()
        return None

    def named(self, name: str) -> int | None:
        """The file of exactly this module name, directly or under a source root."""
        found = self.exact.get(name)
        return found if found is not None else self.suffix(name)

    def suffix(self, name: str) -> int | None:
        """The one module whose name ends with `name` (`lib/matplotlib` for `matplotlib`)."""
        if self._by_suffix is None:
            self._index_suffixes()
        assert self._by_suffix is not None
        return self._by_suffix.get(name) if "." in name else self._by_root.get(name)

    def _index_suffixes(self) -> None:
        by_suffix: dict[str, int | None] = {}
        by_root: dict[str, int | None] = {}
        for module, f in self.exact.items():
            pieces = module.split(".")
            for k in range(1, len(pieces)):
                key = ".".join(pieces[k:])
                # An ambiguous suffix (two `utils` modules) resolves to nothing.
                by_suffix[key] = f if key not in by_suffix else None
            if len(pieces) == 2 and pieces[0] not in self.exact:
                # A top-level package under a source root (`lib/matplotlib`, `src/_pytest`)
                # is what `import matplotlib` means; one name alone is no suffix of anything
                # deeper (`utils` of `pkg.utils`).
                by_root[pieces[1]] = f if pieces[1] not in by_root else None
        self._by_suffix = by_suffix
        self._by_root = by_root
