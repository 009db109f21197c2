"""Ranking: each signal puts the right file first, and every hit says why."""

from __future__ import annotations

import pytest

from nexusd.code.corpus import Corpus, is_test_path
from nexusd.code.lang_python import parse_python
from nexusd.code.query import mine
from nexusd.code.rank import rank

FILES = {
    "app/__init__.py": "from app.config import Config\n",
    "app/config.py": (
        "import json\n\n\nclass Config(dict):\n"
        "    def from_file(self, filename, load=json.load):\n"
        "        with open(filename) as fh:\n"
        "            return self.update(load(fh))\n"
    ),
    "app/cli.py": "from app.config import Config\n\n\ndef main(argv):\n    return Config()\n",
    "app/routing.py": "def route(rule):\n    '''Register a URL rule.'''\n    return rule\n",
    "app/templating.py": (
        "def render_template(name, **context):\n    return name.format(**context)\n"
    ),
    "tests/test_routing.py": (
        "from app.routing import route\n\n\ndef test_route_keeps_the_rule():\n"
        "    assert route('/a') == '/a'\n"
    ),
}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus(parse_python(path, text) for path, text in FILES.items())


def top(corpus: Corpus, text: str, title: str = "") -> list[str]:
    return [hit.path for hit in rank(corpus, mine(text, title=title), k=5)]


def test_a_defined_name_finds_its_file(corpus: Corpus) -> None:
    hits = rank(corpus, mine("Config.from_file crashes when the file is missing"), k=3)
    assert hits[0].path == "app/config.py"
    assert "defines `Config.from_file`" in hits[0].reasons
    assert hits[0].units[0].qualname == "Config.from_file"
    assert hits[0].units[0].start == 5


def test_a_traceback_frame_finds_its_file(corpus: Corpus) -> None:
    trace = (
        'Traceback:\n  File "/srv/site-packages/app/templating.py", line 2, in render_template\n'
    )
    hits = rank(corpus, mine("KeyError\n" + trace), k=3)
    assert hits[0].path == "app/templating.py"
    assert "in the traceback at line 2" in hits[0].reasons


def test_a_named_path_and_a_dotted_module(corpus: Corpus) -> None:
    assert top(corpus, "something is off in app/cli.py")[0] == "app/cli.py"
    hits = rank(corpus, mine("calling app.routing.route twice"), k=3)
    assert hits[0].path == "app/routing.py"
    assert "module `app.routing.route`" in hits[0].reasons


def test_a_dotted_name_that_is_only_imported_does_not_point_at_the_package(corpus: Corpus) -> None:
    assert corpus.resolve_dotted("app.Config") is None  # app/__init__ imports it, defines nothing
    assert corpus.resolve_dotted("app.config.Config") == corpus.index["app/config.py"]


def test_tests_rank_below_the_code_they_test(corpus: Corpus) -> None:
    ranked = top(corpus, "test_route_keeps_the_rule fails: route drops the rule")
    assert ranked.index("app/routing.py") < ranked.index("tests/test_routing.py")


def test_nothing_to_search_gives_nothing(corpus: Corpus) -> None:
    assert rank(corpus, mine("   "), k=5) == []
    assert rank(Corpus([]), mine("Config"), k=5) == []


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_x.py", True),
        ("src/pkg/x_test.go", True),
        ("web/app.spec.ts", True),
        ("pkg/testing/util.py", True),
        ("conftest.py", True),
        ("src/_pytest/python.py", False),
        ("sympy/utilities/pytest.py", False),
        ("latest.py", False),
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test
