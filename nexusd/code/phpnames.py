"""Which file declares the class a PHP `use` names: found by the namespace and name files
declare (`namespace Illuminate\\Support; class Str`), not by where they lie. PSR-4 maps a
namespace to any folder (`GuzzleHttp\\` to `src/`), a split package keeps
`Illuminate\\Support\\Collection` in `src/Illuminate/Collections/`, and a test stub or a
type-test file may lie at the path the name spells."""

from __future__ import annotations

from collections.abc import Sequence

from nexusd.code.units import CodeUnit

_DECLARED = frozenset({"class", "function"})


class PhpNames:
    """Qualified name (`Illuminate.Support.Str`) → the one PHP file declaring it."""

    def __init__(self, languages: Sequence[str], units: Sequence[Sequence[CodeUnit]]) -> None:
        self.php = [language == "php" for language in languages]
        declared: dict[str, int] = {}
        twice: set[str] = set()
        for f, file_units in enumerate(units):
            if not self.php[f]:
                continue
            for unit in file_units:
                if unit.kind not in _DECLARED:
                    continue
                # A name two files declare (a polyfill, a stub) says neither is the one.
                if declared.setdefault(unit.qualname, f) != f:
                    twice.add(unit.qualname)
        self._declared = {name: f for name, f in declared.items() if name not in twice}

    def file(self, imported: str) -> int | None:
        """The file of `A/B/C.php`, ts_imports' form of `use A\\B\\C;`; None for a name no
        file of the repository declares (a vendor's) or two do."""
        return self._declared.get(imported.removesuffix(".php").replace("/", "."))
