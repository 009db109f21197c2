"""How a name a request's code never binds is bound from the repository: imports to try."""

from __future__ import annotations

import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.importable import import_lines, import_name
from nexusd.code.lang_python import parse_python

FILES = {
    "pkg/__init__.py": "from pkg.core import add\n",
    "pkg/core.py": "def add(a, b):\n    return a + b\n\nx = 1\n",
    "pkg/abc.py": "x, y, theta = 1, 2, 3\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "class Permutation:\n    pass\n",
    "pkg/objects.py": "class Plot:\n    pass\n",
    "pkg/pyplot.py": "def plot():\n    pass\n",
    "pkg/__main__.py": "import sys\n\nsys.exit(1)\n",
    "src/lib/__init__.py": "",
    "src/lib/util.py": "def helper():\n    return 1\n",
    "src/tool.py": "def run():\n    return 1\n",
    "setup.py": "from setuptools import setup\n\nx = 1\nsetup()\n",
    "conftest.py": "",
    "docs/conf.py": "x = 2\n",
    "tests/test_core.py": "x = 5\n\ndef test_add():\n    pass\n",
}


def corpus() -> Corpus:
    return Corpus(parse_python(path, text) for path, text in FILES.items())


def test_a_name_comes_from_the_module_that_defines_the_most_of_those_asked() -> None:
    found = import_lines(corpus(), ["x", "y", "theta", "Permutation", "helper", "Missing"])
    # `x` from the module that also defines `y` and `theta`; never from a test or a script.
    assert found["x"] == ("from pkg.abc import x", "from pkg.core import x")
    assert found["y"] == ("from pkg.abc import y",)
    assert found["Permutation"] == ("from pkg.sub.deep import Permutation",)
    assert found["helper"] == ("from lib.util import helper",)
    assert "Missing" not in found
    assert import_lines(corpus(), ["x"], per_name=1) == {"x": ("from pkg.abc import x",)}


@pytest.mark.parametrize(
    ("alias", "lines"),
    [
        ("pk", ("import pkg as pk",)),  # the package's letters in order
        ("po", None),  # `pkg.objects`' initials: a submodule would run code the report never did
        ("plt", None),  # nor is `pkg.pyplot` bound for the other package's `plt`
        ("zz", None),  # abbreviates nothing here
        ("p", None),  # one letter is a variable (`r = requests.get(…)`), not a module
    ],
)
def test_a_short_name_nothing_defines_may_be_an_alias_of_a_module(
    alias: str, lines: tuple[str, ...] | None
) -> None:
    assert import_lines(corpus(), [alias]).get(alias) == lines


def test_an_alias_of_a_package_the_repository_imports_everywhere() -> None:
    files = dict(FILES)
    for i in range(20):
        files[f"pkg/mod_{i}.py"] = "import numpy as np\n\nv = np.zeros(3)\n"
    files["pkg/diffs.py"] = "import difflib\n"  # one file of 35: a module, not a habit
    found = import_lines(Corpus(parse_python(p, t) for p, t in files.items()), ["np", "df", "pk"])
    assert found["np"] == ("import numpy as np",)
    assert "df" not in found  # `df` is a reporter's data frame, not `difflib`
    assert found["pk"] == ("import pkg as pk",)  # the repository's own package first


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("pkg/sub/__init__.py", "pkg.sub"),
        ("pkg/core.py", "pkg.core"),
        ("src/lib/util.py", "lib.util"),  # `src/` is where the run looks too
        ("pkg/my-file.py", ""),  # no identifier: cannot be imported
        ("setup.py", ""),  # a script, not a module of a package
        ("pkg/__main__.py", ""),  # runs the program when imported
        ("docs/conf.py", ""),
    ],
)
def test_the_name_a_file_is_imported_by(path: str, name: str) -> None:
    assert import_name(corpus(), path) == name


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        ("tool", ("import tool",)),  # `src/tool.py`: a module of one file, as `pytest.py` is
        ("setup", None),  # a program: importing it runs it
        ("conftest", None),  # the test runner's, not the reporter's
        ("run", None),  # its names are not a package's: a top-level file may be a program
    ],
)
def test_a_name_that_is_a_top_level_module_is_imported_whole(
    name: str, lines: tuple[str, ...] | None
) -> None:
    assert import_lines(corpus(), [name]).get(name) == lines
