"""Python files through `ast`: units, own text, imports, and the fallback for bad syntax."""

from __future__ import annotations

from nexusd.code.lang_python import parse_python

SOURCE = '''"""Shapes."""
from __future__ import annotations

import math
from . import util
from .base import Base as B

RATIO = 2


class Circle(B):
    """A round shape."""

    sides = 0

    def area(self, scale: float = 1.0) -> float:
        """Its area."""
        return math.pi * self.r ** 2 * scale

    @property
    def perimeter(self):
        return util.twice(math.pi * self.r)


def unit_circle():
    return Circle()


try:
    from fastshapes import speedup
except ImportError:
    def speedup(x):
        return x
'''


def test_units_kinds_lines_and_qualnames() -> None:
    parsed = parse_python("pkg/shapes.py", SOURCE)
    assert parsed.status == "ok"
    got = [(u.kind, u.qualname, u.start, u.end) for u in parsed.units]
    assert got == [
        ("file", "pkg.shapes", 1, 33),
        ("class", "Circle", 11, 22),
        ("method", "Circle.area", 16, 18),
        ("method", "Circle.perimeter", 20, 22),  # from its decorator
        ("function", "unit_circle", 25, 26),
        ("function", "speedup", 32, 33),  # defined in an `except` block
    ]


def test_signatures_docs_bases_defines() -> None:
    units = {u.qualname: u for u in parse_python("pkg/shapes.py", SOURCE).units}
    circle, area = units["Circle"], units["Circle.area"]
    assert circle.signature == "class Circle(B)"
    assert circle.doc == "A round shape."
    assert circle.bases == ("B",)
    assert circle.defines == ("Circle", "area", "perimeter")
    assert area.signature == "def area(self, scale: float = 1.0) -> float"
    assert area.doc == "Its area."
    assert "pi" in area.uses and "math" in area.uses


def test_a_module_defines_the_names_its_statements_bind_and_only_those() -> None:
    source = (
        "A, *REST = 1, 2\nREGISTRY[KEY] = 1\nCONFIG.VALUE = 2\n"
        "if FAST:\n    QT_API = 'a'\nelse:\n    QT_API = 'b'\n"
        "try:\n    import magic\n    HAS_MAGIC = True\nexcept ImportError:\n    HAS_MAGIC = False\n"
        "with lock:\n    CACHE_X = {}\n\n\ndef make():\n    INNER = 1\n"
    )
    defines = parse_python("pkg/settings.py", source).file_unit.defines
    assert defines == ("make", "A", "REST", "QT_API", "HAS_MAGIC", "CACHE_X")


def test_own_text_excludes_nested_units() -> None:
    units = {u.qualname: u for u in parse_python("pkg/shapes.py", SOURCE).units}
    assert "sides = 0" in units["Circle"].text
    assert "math.pi" not in units["Circle"].text  # a method's body belongs to the method
    assert "RATIO = 2" in units["pkg.shapes"].text
    assert "return Circle()" not in units["pkg.shapes"].text


def test_imports_resolve_relative_names() -> None:
    file_unit = parse_python("pkg/shapes.py", SOURCE).file_unit
    assert file_unit.imports == (
        "__future__",
        "__future__.annotations",
        "math",
        "pkg",
        "pkg.util",
        "pkg.base",
        "pkg.base.Base",
        "fastshapes",
        "fastshapes.speedup",
    )
    assert "RATIO" in file_unit.defines


def test_package_init_resolves_relative_imports_against_itself() -> None:
    file_unit = parse_python("pkg/__init__.py", "from .shapes import Circle\n").file_unit
    assert file_unit.qualname == "pkg"
    assert file_unit.imports == ("pkg.shapes", "pkg.shapes.Circle")


def test_syntax_error_falls_back_to_line_windows() -> None:
    parsed = parse_python("broken.py", "def f(:\n    pass\n")
    assert parsed.status == "syntax-error"
    assert parsed.note.startswith("line 1:")
    assert [u.kind for u in parsed.units] == ["file", "window"]
    assert "def f" in parsed.units[1].text


def test_empty_file() -> None:
    parsed = parse_python("empty.py", "")
    assert parsed.status == "ok"
    assert [u.kind for u in parsed.units] == ["file"]


def test_a_comment_after_the_header_is_not_the_signature() -> None:
    parsed = parse_python(
        "pkg/config.py",
        "class Config(dict):  # type: ignore[type-arg]\n"
        "    def get(self, key) -> str:  # noqa: D102\n        return key\n\n"
        "    def split(self, sep='#'):\n        return sep\n",
    )
    assert [u.signature for u in parsed.units[1:]] == [
        "class Config(dict)",
        "def get(self, key) -> str",
        "def split(self, sep='#')",
    ]
