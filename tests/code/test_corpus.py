"""The corpus: which file a module or dotted name in a report means, and the import graph."""

from __future__ import annotations

import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.lang_python import parse_python
from nexusd.code.lang_treesitter import parse_treesitter
from nexusd.code.parsers import language_for, parse_file


def _corpus(files: dict[str, str]) -> Corpus:
    return Corpus(parse_python(path, text) for path, text in files.items())


def test_a_package_under_a_source_root_is_what_its_bare_name_means() -> None:
    corpus = _corpus(
        {
            "lib/mpl/__init__.py": "def get_backend():\n    return 'agg'\n",
            "lib/mpl/pyplot.py": "import mpl\n\n\ndef figure():\n    return mpl.get_backend()\n",
            "src/_tool/__init__.py": "",
            "src/_tool/util.py": "def helper():\n    pass\n",
        }
    )
    init = corpus.index["lib/mpl/__init__.py"]
    # `mpl.get_backend()` in a report: the package file that defines it.
    assert corpus.resolve_dotted("mpl.get_backend") == init
    assert corpus.resolve_dotted("mpl") == init
    assert corpus.resolve_dotted("_tool.util.helper") == corpus.index["src/_tool/util.py"]
    # `import mpl` inside the package is an edge of the import graph.
    assert init in corpus.imports[corpus.index["lib/mpl/pyplot.py"]]
    assert corpus.resolve_dotted("mpl.nothing_defined") is None


def test_a_bare_name_is_no_suffix_of_a_deeper_module_nor_an_ambiguous_root() -> None:
    corpus = _corpus(
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": "def f():\n    pass\n",
            "lib/dup/__init__.py": "X_VALUE = 1\n",
            "src/dup/__init__.py": "X_VALUE = 2\n",
        }
    )
    assert corpus.resolve_dotted("utils.f") is None  # `pkg.utils` is not what `utils` means
    assert corpus.resolve_dotted("pkg.utils.f") == corpus.index["pkg/utils.py"]
    assert corpus.resolve_dotted("dup.X_VALUE") is None  # two source roots hold a `dup`


@pytest.mark.parametrize("twin", ["util.php", "util.rb", "util.js", "src/util.rb"])
def test_an_import_resolves_among_its_own_languages_files(twin: str) -> None:
    lang = language_for(twin)
    assert lang is not None
    files = [
        parse_python("main.py", "import util\n\n\ndef main():\n    util.util_fn()\n"),
        parse_python("util.py", "def util_fn():\n    pass\n"),
        parse_file(
            twin, b"def util_fn; end\n" if ".rb" in twin else b"function util_fn() {}\n", lang
        ),
    ]
    corpus = Corpus(files)
    # `util.php` sorts before `util.py` and takes the bare name `util` for a report's dotted
    # names, but Python's `import util` is the Python file.
    assert corpus.imports[corpus.index["main.py"]] == {corpus.index["util.py"]}
    # A Python import with no Python module to mean is no edge to another language's file.
    lone = Corpus([files[0], files[2]])
    assert lone.imports[lone.index["main.py"]] == set()


def test_a_function_inside_a_function_defines_no_name_outside_it() -> None:
    corpus = _corpus(
        {
            "pkg/array.py": (
                "class DataArray:\n    def _all_compat(self, other, compat):\n"
                "        def compat(x, y):\n            return x == y\n"
                "        return compat\n\n    class Meta:\n        pass\n"
            ),
            "pkg/merge.py": "def compat(a, b):\n    return a is b\n",
        }
    )
    defining = {corpus.entries[e].unit.qualname for e in corpus.defs["compat"]}
    assert defining == {"compat"}  # the closure `DataArray._all_compat.compat` is no name
    assert {corpus.entries[e].unit.qualname for e in corpus.defs["Meta"]} == {"DataArray.Meta"}


def test_a_method_a_plugin_sets_defines_its_name_unless_the_class_does() -> None:
    sources = {
        "src/index.js": "class Dayjs {\n  format(s) {\n    return s\n  }\n}\n",
        "src/plugin/week/index.js": (
            "export default (o, c) => {\n  const proto = c.prototype\n"
            "  proto.week = function () {\n    return 1\n  }\n"
            "  const old = proto.format\n"
            "  proto.format = function (s) {\n    return old.bind(this)(s)\n  }\n}\n"
        ),
    }
    parsed = [parse_treesitter(path, text, "javascript") for path, text in sources.items()]
    corpus = Corpus(p for p in parsed if p is not None)

    def defining(name: str) -> set[str]:
        return {corpus.entries[e].unit.qualname for e in corpus.defs.get(name, [])}

    assert defining("week") == {"default.proto.week"}  # nothing else defines it
    assert defining("format") == {"Dayjs.format"}  # the plugin's override is no definition
    assert {corpus.entries[e].unit.qualname for e in corpus.defs_lower["week"]} == {
        "default.proto.week"
    }


def test_a_file_of_names_without_functions_is_its_own_unit_but_a_package_is_not() -> None:
    corpus = Corpus(
        parse_python(path, text)
        for path, text in {
            "pkg/__init__.py": "from pkg.api import total\n__all__ = ['total']\n",
            "pkg/api.py": "def total(xs):\n    return sum(xs)\n",
            "pkg/settings.py": "TIMEOUT = 30\nRETRIES = 3\n",
        }.items()
    )
    # The settings' words have no unit to match but their file; the package's are its
    # modules' (a package's re-exports outranked the code they name).
    assert [corpus.paths[i] for i in corpus.unitless] == ["pkg/settings.py"]


def test_a_test_of_a_javascript_barrel_tests_the_files_behind_it() -> None:
    files = {
        "src/index.ts": (
            "export { defineCustomElement } from './apiCustomElement'\n"
            "export { h } from './h'\nexport * from './other'\n"
        ),
        "src/apiCustomElement.ts": "export function defineCustomElement(o) {\n  return o\n}\n",
        "src/h.ts": "export function h(tag) {\n  return tag\n}\n",
        "src/other.ts": "export function other() {\n  return 1\n}\n",
        "src/direct.ts": "export function direct() {\n  return 2\n}\n",
        "test/customElement.spec.ts": (
            "import { defineCustomElement } from '../src'\nimport { direct } from '../src/direct'\n"
            "test('defines', () => {\n  defineCustomElement({})\n  direct()\n})\n"
        ),
    }
    parsed = [parse_treesitter(p, t, "typescript") for p, t in files.items()]
    corpus = Corpus(p for p in parsed if p is not None)
    test = corpus.index["test/customElement.spec.ts"]
    # The barrel gives way to the file defining what the test calls; a file imported
    # directly stays, and `h`, which the test never calls, is not tested by it.
    assert sorted(corpus.paths[t] for t, _ in corpus.tested_by(test)) == [
        "src/apiCustomElement.ts",
        "src/direct.ts",
    ]


def test_a_python_package_is_no_barrel() -> None:
    corpus = _corpus(
        {
            "pkg/__init__.py": "from pkg.core import run\n",
            "pkg/core.py": "def run():\n    pass\n",
            "tests/test_pkg.py": "from pkg import run\n\n\ndef test_run():\n    run()\n",
        }
    )
    test = corpus.index["tests/test_pkg.py"]
    assert [corpus.paths[t] for t, _ in corpus.tested_by(test)] == ["pkg/__init__.py"]
