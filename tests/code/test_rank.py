"""Ranking: each signal puts the right file first, and every hit says why."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.lang_python import parse_python
from nexusd.code.parsers import parse_file
from nexusd.code.query import mine
from nexusd.code.rank import Ranking, executed_signal, rank, ranking
from nexusd.code.weights import Weights

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
    assert "in the traceback at `render_template` line 2" in hits[0].reasons


def test_a_file_in_a_traceback_gives_one_reason_innermost_frames_first() -> None:
    frames = "".join(
        f'  File "/usr/lib/site-packages/app/deep.py", line {n}, in f{n}\n' for n in range(1, 6)
    )
    corpus = Corpus(
        [
            parse_python("app/deep.py", "".join(f"def f{n}():\n    pass\n" for n in range(1, 6))),
            parse_python("app/other.py", "def f1_helper():\n    pass\n"),
        ]
    )
    hits = rank(corpus, mine("it fails\nTraceback (most recent call last):\n" + frames))
    shown = [r for r in hits[0].reasons if "traceback" in r]
    assert shown == ["in the traceback at `f5` line 5, `f4` line 4, `f3` line 3, …"]


def test_a_comprehensions_frame_is_said_once_by_its_functions_name() -> None:
    # sympy-17630: `<listcomp>` on the line of `colblocksizes` read "line 80, `colblocksizes`
    # line 80".
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/venv/site-packages/app/blocks.py", line 80, in colblocksizes\n'
        '  File "/venv/site-packages/app/blocks.py", line 80, in <listcomp>\n'
        "AttributeError: 'Zero' object has no attribute 'cols'\n"
    )
    corpus = Corpus([parse_python("app/blocks.py", "def colblocksizes():\n    pass\n")])
    reasons = rank(corpus, mine("it fails\n" + trace))[0].reasons
    assert [r for r in reasons if "traceback" in r] == [
        "in the traceback at `colblocksizes` line 80"
    ]


def test_the_reason_that_counted_most_comes_first() -> None:
    # `Widget` is defined in both files, `render_widget` only in the second: the rarer
    # definition counts more, and the traceback frame more than both.
    corpus = Corpus(
        [
            parse_python("ui/a.py", "class Widget:\n    pass\n"),
            parse_python(
                "ui/b.py",
                "class Widget:\n    pass\n\n\ndef render_widget(w):\n    return w\n",
            ),
            parse_python("ui/c.py", "def unrelated():\n    pass\n"),
        ]
    )
    trace = (
        'Traceback (most recent call last):\n  File "/x/ui/c.py", line 2, in unrelated\n'
        '  File "/x/ui/b.py", line 6, in render_widget\n'
    )
    hits = rank(corpus, mine("Widget and render_widget break\n" + trace))
    assert hits[0].path == "ui/b.py"
    assert hits[0].reasons[:3] == (
        "in the traceback at `render_widget` line 6",
        "defines `render_widget`",
        "defines `Widget`",
    )
    assert hits[0].reasons[-1].startswith("mentions ")


def test_a_named_path_and_a_dotted_module(corpus: Corpus) -> None:
    assert top(corpus, "something is off in app/cli.py")[0] == "app/cli.py"
    hits = rank(corpus, mine("calling app.routing.route twice"), k=3)
    assert hits[0].path == "app/routing.py"
    assert "module `app.routing.route`" in hits[0].reasons


def test_a_path_named_at_a_line_counts_more_than_a_path_named_alone(corpus: Corpus) -> None:
    text = (
        "Compare app/routing.py with app/templating.py, see\n"
        "https://github.com/org/app/blob/main/app/templating.py#L2"
    )
    hits = rank(corpus, mine(text), k=3)
    assert [h.path for h in hits[:2]] == ["app/templating.py", "app/routing.py"]
    assert "named at line 2" in hits[0].reasons
    scores = {h.path: h.score for h in hits}
    unlined = rank(corpus, mine(text.replace("#L2", "")), k=3)
    assert {h.path: h.score for h in unlined}["app/templating.py"] < scores["app/templating.py"]


def test_a_dotted_name_that_is_only_imported_does_not_point_at_the_package(corpus: Corpus) -> None:
    assert corpus.resolve_dotted("app.Config") is None  # app/__init__ imports it, defines nothing
    assert corpus.resolve_dotted("app.config.Config") == corpus.index["app/config.py"]


def test_a_method_is_listed_before_the_class_whose_text_holds_it(corpus: Corpus) -> None:
    query = mine("Config loses keys when a JSON file is loaded with open")
    whole = rank(corpus, query, k=1, weights=Weights(class_unit=1.0))[0]
    assert [u.qualname for u in whole.units] == ["Config", "Config.from_file"]
    hit = rank(corpus, query, k=1)[0]
    assert [u.qualname for u in hit.units] == ["Config.from_file", "Config"]
    assert hit.score == whole.score  # the order within the file, not the file's rank


def test_the_functions_the_requests_code_ran_are_listed_before_those_it_did_not() -> None:
    module = (
        "def read_rows(path):\n    return open(path).read().split('\\n')\n\n\n"
        "@cached\ndef write_rows(path, rows):\n    open(path, 'w').write('\\n'.join(rows))\n"
    )
    corpus = Corpus([parse_python("app/rows.py", module)])
    query = mine("rows lose their path when read or written")
    plain = rank(corpus, query, k=1)[0]
    assert [u.qualname for u in plain.units] == ["read_rows", "write_rows"]
    assert not any(u.ran for u in plain.units)
    # `write_rows` is decorated: its code object's first line is the decorator's, line 5.
    for ran, first in (({1}, "read_rows"), ({5}, "write_rows")):
        hit = rank(corpus, query, k=1, ran_lines={"app/rows.py": ran})[0]
        assert hit.units[0].qualname == first
        assert [u.ran for u in hit.units] == [True, False]
        assert hit.score == plain.score  # the order within the file, not the file's rank
    # Lines of another file, or only lines no function starts at (a module's or class
    # body's code, run at import), change nothing.
    for lines in ({"app/other.py": {1}}, {"app/rows.py": {3, 4}}):
        assert rank(corpus, query, k=1, ran_lines=lines)[0].units == plain.units


def test_the_files_a_recursion_went_round_rank_above_the_others_it_entered() -> None:
    files = {
        "calc/words.py": 'def nested_depth(expr):\n    "depth of a nested expression"\n',
        "calc/shape.py": (
            'def helper(expr):\n    "a nested expression"\n    return expr\n\n\n'
            "def grow(expr):\n    return absolute(expr)\n"
        ),
        "calc/absval.py": "def absolute(expr):\n    return grow(expr)\n",
        "calc/entered.py": "def entry(expr):\n    return expr\n",
    }
    corpus = Corpus(parse_python(path, text) for path, text in files.items())
    query = mine("maximum recursion depth exceeded", title="a nested expression")
    ran: dict[str, tuple[str, ...]] = dict.fromkeys(
        ("calc/shape.py", "calc/absval.py", "calc/entered.py"), ()
    )
    extra, why = executed_signal(corpus, ran)
    plain = rank(corpus, query, k=4, extra=extra, why=why)
    score = {hit.path: hit.score for hit in plain}
    assert score["calc/absval.py"] == score["calc/entered.py"]  # entered alike
    before = next(hit for hit in plain if hit.path == "calc/shape.py")
    assert [unit.qualname for unit in before.units] == ["helper"]
    looped = {"calc/shape.py": ((6, "grow"),), "calc/absval.py": ((1, "absolute"),)}
    extra, why = executed_signal(corpus, ran, looped)
    assert set(extra) == {"executed", "recursion"}
    hits = rank(corpus, query, k=4, extra=extra, why=why, recursion=looped)
    after = {hit.path: hit.score for hit in hits}
    assert (
        hits[-1].path == "calc/entered.py" and after["calc/entered.py"] == score["calc/entered.py"]
    )
    assert after["calc/absval.py"] > after["calc/entered.py"]
    assert after["calc/shape.py"] > score["calc/shape.py"]
    shape = next(hit for hit in hits if hit.path == "calc/shape.py")
    assert shape.reasons[0] == "went round in the recursion the request's code ran into (`grow`)"
    # Listed first in its file, above `helper` and its words: where to break the recursion.
    assert [unit.qualname for unit in shape.units] == ["grow", "helper"]
    assert "recursion" not in executed_signal(corpus, ran, {})[0]


def test_a_recursions_function_leads_its_file_though_the_run_never_saw_its_first_line() -> None:
    # A RecursionError caught earlier in the statement drops the tracer's profile hook (and
    # the prelude runs untraced): `layout` recurred, yet the run's first lines lack it.
    module = (
        'def render(value):\n    "render a value: its repr, then its layout"\n'
        "    return layout(safe_repr(value))\n\n\n"
        "def safe_repr(value):\n    return repr(value)\n\n\n"
        "def layout(shown):\n    return layout(shown)\n"
    )
    corpus = Corpus([parse_python("app/show.py", module)])
    query = mine("render of a value never returns", title="render a value")
    extra, why = executed_signal(
        corpus, {"app/show.py": ("render", "safe_repr")}, {"app/show.py": ((10, "layout"),)}
    )
    hit = rank(
        corpus,
        query,
        k=1,
        extra=extra,
        why=why,
        ran_lines={"app/show.py": {1, 6}},
        recursion={"app/show.py": ((10, "layout"),)},
    )[0]
    assert hit.units[0].qualname == "layout" and hit.units[0].ran


def test_tests_rank_below_the_code_they_test(corpus: Corpus) -> None:
    ranked = top(corpus, "test_route_keeps_the_rule fails: route drops the rule")
    assert ranked.index("app/routing.py") < ranked.index("tests/test_routing.py")


def test_the_best_tests_come_beside_the_files_whatever_their_place(corpus: Corpus) -> None:
    query = mine("test_route_keeps_the_rule fails: route drops the rule")
    found = ranking(corpus, query, k=1, tests=2)
    assert [hit.path for hit in found.files] == ["app/routing.py"]
    assert [hit.path for hit in found.tests] == ["tests/test_routing.py"]
    assert found.tests[0].reasons and found.tests[0].units  # a hit like any other
    assert ranking(corpus, query, k=1).tests == ()
    assert list(found.files) == rank(corpus, query, k=1)


def test_the_best_tests_are_modules_and_the_second_is_near_the_first() -> None:
    files = {
        **FILES,
        "tests/conftest.py": "def route_rule_fixture():\n    return 'route rule'\n",
        "tests/test_misc.py": "def test_misc():\n    assert 'rule'\n",
    }
    corpus = Corpus(parse_python(path, text) for path, text in files.items())
    found = ranking(corpus, mine("route drops the route rule: test_route_keeps_the_rule"), tests=2)
    # conftest.py holds fixtures, not tests; test_misc.py holds `rule` once: too far below.
    assert [hit.path for hit in found.tests] == ["tests/test_routing.py"]


def test_nothing_to_search_gives_nothing(corpus: Corpus) -> None:
    assert rank(corpus, mine("   "), k=5) == []
    assert rank(Corpus([]), mine("Config"), k=5) == []
    assert ranking(corpus, mine("   "), tests=2) == Ranking()


def test_examples_rank_below_the_library_they_show() -> None:
    demo = (
        "from app.routing import route\n\n\ndef demo_route_rule():\n"
        '    """Register a URL rule, then the same URL rule again."""\n'
        "    route('/rule')\n    route('/rule')\n"
    )
    corpus = Corpus(
        [
            *(parse_python(path, text) for path, text in FILES.items()),
            parse_python("examples/route_rule_demo.py", demo),
        ]
    )
    query = mine("Registering the same URL rule twice with route() loses the rule")
    flat = [h.path for h in rank(corpus, query, k=5, weights=Weights(auxiliary_factor=1.0))]
    assert flat[0] == "examples/route_rule_demo.py"  # the demo says it all, more often
    ranked = [h.path for h in rank(corpus, query, k=5)]
    assert ranked[0] == "app/routing.py"
    assert "examples/route_rule_demo.py" in ranked  # still found, below the library


def test_a_generated_copy_ranks_below_the_source_it_copies() -> None:
    from nexusd.code.parsers import parse_file

    source = FILES["app/routing.py"]
    # The copy's own notes say the request's words again: alone, it would rank first.
    notes = "# route() loses no URL rule it registers: each rule, each URL is kept\n"
    copy = "# This file is an amalgamation of app/*.py. DO NOT EDIT.\n\n" + notes + source
    corpus = Corpus(
        [
            *(parse_python(path, text) for path, text in FILES.items()),
            parse_file("single/app_all.py", copy.encode(), "python"),
        ]
    )
    assert corpus.files[corpus.index["single/app_all.py"]].generated
    query = mine("route() loses the URL rule it registers")
    flat = [h.path for h in rank(corpus, query, k=5, weights=Weights(auxiliary_factor=1.0))]
    assert flat[0] == "single/app_all.py"
    assert top(corpus, "route() loses the URL rule it registers")[0] == "app/routing.py"


def test_code_in_a_language_the_repository_hardly_uses_ranks_below_its_own() -> None:
    from nexusd.code.parsers import language_for

    files = {f"src/walk{i}.rs": f"pub fn step{i}(n: u32) -> u32 {{ n + {i} }}\n" for i in range(30)}
    files["src/main.rs"] = (
        "/// The process exit code: 0 on a match, 1 on no match, 2 on an error.\n"
        "pub fn exit_code(matched: bool, failed: bool) -> i32 { 0 }\n"
    )
    # A packaging script that says the request's words more often than the code does.
    files["pkg/brew/tool.rb"] = (
        "class Tool < Formula\n  def test\n"
        "    # exit code on no match; exit code on error; exit codes differ\n"
        "    system 'tool', '--no-match-exit-code', '--error-exit-code'\n  end\nend\n"
    )
    corpus = Corpus(parse_file(p, t.encode(), language_for(p) or "") for p, t in files.items())
    assert [corpus.paths[f] for f in np.flatnonzero(corpus.minority)] == ["pkg/brew/tool.rb"]
    query = mine("use different exit codes for no match and error")
    flat = [h.path for h in rank(corpus, query, k=3, weights=Weights(minority_factor=1.0))]
    assert flat[0] == "pkg/brew/tool.rb"
    assert [h.path for h in rank(corpus, query, k=3)][:2] == ["src/main.rs", "pkg/brew/tool.rb"]


def test_path_like_imports_of_other_languages_join_the_graph() -> None:
    from nexusd.code.lang_treesitter import parse_treesitter

    files = {
        "web/src/draw.ts": ("typescript", "export function drawShape(s: string) { return s; }\n"),
        "web/src/app.ts": ("typescript", "import { drawShape } from './draw';\ndrawShape('a');\n"),
        "web/src/index.ts": ("typescript", "export * from './app';\n"),
        "lib/util/geo.h": ("c", "int area(int w, int h);\n"),
        "lib/main.c": ("c", '#include "util/geo.h"\nint main(void) { return area(1, 2); }\n'),
        "src/shapes/circle.rs": ("rust", "pub fn radius() -> f64 { 1.0 }\n"),
        "src/main.rs": ("rust", "use crate::shapes::circle;\nfn main() { circle::radius(); }\n"),
    }
    parsed = [parse_treesitter(path, text, lang) for path, (lang, text) in files.items()]
    corpus = Corpus(p for p in parsed if p is not None)

    def imports(path: str) -> set[str]:
        return {corpus.paths[i] for i in corpus.imports[corpus.index[path]]}

    assert imports("web/src/app.ts") == {"web/src/draw.ts"}
    assert imports("web/src/index.ts") == {"web/src/app.ts"}
    assert imports("lib/main.c") == {"lib/util/geo.h"}
    assert imports("src/main.rs") == {"src/shapes/circle.rs"}


def test_prose_ranks_below_code_that_matches_less() -> None:
    from nexusd.code.lines import line_windows

    readme = "Routing: register a URL rule with route(); every rule is kept, route by route.\n"
    corpus = Corpus(
        [
            *(parse_python(path, text) for path, text in FILES.items()),
            line_windows("docs/routing.md", readme * 5),
        ]
    )
    ranked = top(corpus, "route() loses the URL rule when registering")
    assert ranked[0] == "app/routing.py"
    assert "docs/routing.md" in ranked  # still found, below the code


def test_an_outside_signal_counts_only_with_a_weight(corpus: Corpus) -> None:
    query = mine("Config.from_file cannot load a template")
    plain = [h.path for h in rank(corpus, query, k=3)]
    assert plain[0] == "app/config.py"
    # An embedding-like score that prefers the templating module, one value per file.
    extra = {"semantic": np.array([p == "app/templating.py" for p in corpus.paths], float)}
    assert [h.path for h in rank(corpus, query, k=3, extra=extra)] == plain
    weighted = rank(corpus, query, k=3, weights=replace(Weights(), semantic=5.0), extra=extra)
    assert weighted[0].path == "app/templating.py"


@pytest.mark.parametrize(
    ("report", "found"),
    [
        ("Set a default FILE_UPLOAD_PERMISSIONS so that uploads are not 0o600", True),
        # A lower-case module-level name is a variable, not a setting; one upper-case word is
        # as likely a reporter's shout: neither is a definition.
        ("the upload_permissions of a stored file vary", False),
        ("NOTE: with DEBUG on, uploads vary", False),
    ],
)
def test_a_named_setting_finds_the_module_that_sets_it(report: str, found: bool) -> None:
    settings = (
        "DEBUG = False\nFILE_UPLOAD_PERMISSIONS = None\nupload_permissions = 0o644\n"
        "REGISTRY[UPLOAD_KEY] = 1\ntry:\n    import magic\nexcept ImportError:\n"
        "    HAS_MAGIC_TYPES = False\n"
    )
    # The storage module talks about upload permissions at length but sets no such constant.
    storage = (
        "import os\n\n\nclass Storage:\n    def save(self, name, permissions=None):\n"
        '        """Save a file upload and set its upload permissions."""\n'
        "        os.chmod(name, permissions)  # file upload permissions\n"
    )
    files = {**FILES, "app/global_settings.py": settings, "app/storage.py": storage}
    corpus = Corpus(parse_python(path, text) for path, text in files.items())
    assert corpus.constants["FILE_UPLOAD_PERMISSIONS"] == [corpus.index["app/global_settings.py"]]
    assert "upload_permissions" not in corpus.constants
    assert "DEBUG" not in corpus.constants
    assert "UPLOAD_KEY" not in corpus.constants  # read by `REGISTRY[UPLOAD_KEY] = 1`, not set
    assert "HAS_MAGIC_TYPES" in corpus.constants  # set in the module's `try` block
    hits = rank(corpus, mine(report), k=5)
    said = [reason for hit in hits for reason in hit.reasons]
    if found:
        assert hits[0].path == "app/global_settings.py"
        assert "sets `FILE_UPLOAD_PERMISSIONS`" in hits[0].reasons
    else:
        assert not any(reason.startswith("sets `") for reason in said)


def test_a_constant_named_exactly_is_the_definition_not_methods_named_alike() -> None:
    files = dict(FILES)
    files["app/settings.py"] = "LOG_LEVEL = 'info'\n"
    for i in range(6):
        files[f"app/logger_{i}.py"] = f"class Logger{i}:\n    def log_level(self):\n        pass\n"
    corpus = Corpus(parse_python(path, text) for path, text in files.items())
    hits = rank(corpus, mine("With LOG_LEVEL set the output is wrong"), k=10)
    reasons = {hit.path: hit.reasons for hit in hits}
    assert reasons["app/settings.py"][0] == "sets `LOG_LEVEL`"
    # `log_level` methods match the words, but only a case-blind guess would call them the
    # definition of `LOG_LEVEL` when a module sets exactly that name.
    assert not any(r.startswith("defines ") for path, rs in reasons.items() for r in rs)


def _message_corpus(extra_holders: int = 0) -> Corpus:
    from nexusd.code.parsers import parse_file

    files = dict(FILES)
    files["app/geometry.py"] = (
        "def locate(point):\n    '''Where a point lies.'''\n    if point.imag:\n"
        "        raise ValueError(\n            'Imaginary coordinates are not permitted.')\n"
        "    return point\n\n\ndef area(shape):\n    return shape.width * shape.height\n"
    )
    for i in range(extra_holders):
        files[f"app/copy_{i}.py"] = (
            "def check(p):\n    raise ValueError('Imaginary coordinates are not permitted.')\n"
        )
    return Corpus(parse_file(path, text.encode(), "python") for path, text in files.items())


def test_the_code_raising_a_quoted_message_ranks_first_and_says_so() -> None:
    report = (
        "Templates break with points\nWhen I render a template with a complex point I get\n\n"
        "    ValueError: Imaginary coordinates are not   permitted.\n\nfrom render_template."
    )
    hits = rank(_message_corpus(), mine(report, title="Templates break with points"), k=3)
    assert hits[0].path == "app/geometry.py"
    assert hits[0].reasons[0] == 'raises or logs "Imaginary coordinates are not permitted."'
    assert hits[0].units[0].qualname == "locate"  # the unit that raises it, not `area`
    # The same message raised in many files is a stock phrase: it points nowhere.
    stock = rank(_message_corpus(extra_holders=2), mine(report), k=10)
    assert all("raises or logs" not in " ".join(h.reasons) for h in stock)


def test_someone_elses_file_of_the_same_name_is_not_this_repositorys() -> None:
    corpus = Corpus(
        parse_python(path, "x = 1\n")
        for path in ("src/_pytest/logging.py", "setup.py", "src/_pytest/python.py")
    )
    assert corpus.file_for_path("/Users/me/code/pmxbot/pmxbot/logging.py") is None
    found = corpus.file_for_path("/venv/lib/python3.9/site-packages/_pytest/logging.py")
    assert found is not None and corpus.paths[found] == "src/_pytest/logging.py"
    found = corpus.file_for_path("/home/me/checkout/setup.py")
    assert found is not None and corpus.paths[found] == "setup.py"
    found = corpus.file_for_path("logging.py")
    assert found is not None and corpus.paths[found] == "src/_pytest/logging.py"
    installed = Corpus(parse_python("src/typing_extensions.py", "x = 1\n") for _ in range(1))
    found = installed.file_for_path("/usr/lib/python3.10/site-packages/typing_extensions.py")
    assert found is not None and installed.paths[found] == "src/typing_extensions.py"


def test_the_unit_holding_a_line_the_request_names_is_listed_first(corpus: Corpus) -> None:
    # `from_file` matches the words better; the reporter says where the fault is.
    text = "Config.from_file crashes on a missing file; the problem is in `app/config.py` at line 4"
    hit = rank(corpus, mine(text), k=3)[0]
    assert hit.path == "app/config.py"
    assert hit.units[0].qualname == "Config"  # line 4 is the class line
    moved = rank(corpus, mine(text.replace("line 4", "line 6")), k=3)[0]
    assert moved.units[0].qualname == "Config.from_file"


SITEMAPS = '''class Sitemap:
    def items(self):
        return []

    def get_latest_lastmod(self):
        return max([self.lastmod(item) for item in self.items()])


class GenericSitemap(Sitemap):
    def lastmod(self, item):
        """The lastmod of an item: lastmod, callable lastmod, items' lastmod."""
        return item.lastmod

    def get_latest_lastmod(self):
        return max(item.lastmod for item in self.items())


def index(request, sitemaps):
    return [site.get_latest_lastmod() for site in sitemaps]
'''


@pytest.mark.parametrize(
    ("innermost", "expected"),
    [
        ("line 6, in get_latest_lastmod\n", "Sitemap.get_latest_lastmod"),
        ("line 15, in get_latest_lastmod\n", "GenericSitemap.get_latest_lastmod"),
        # A comprehension runs in its function: its frame names that function's unit.
        (
            'line 6, in get_latest_lastmod\n  File "/site-packages/app/sitemaps.py", '
            "line 6, in <listcomp>\n",
            "Sitemap.get_latest_lastmod",
        ),
    ],
    ids=["holding-the-line", "the-other-same-named-method", "comprehension"],
)
def test_the_unit_of_a_files_innermost_frame_is_listed_first(innermost: str, expected: str) -> None:
    # django-16255: `lastmod`, the report's word, names another unit better; the error left
    # the file from the innermost frame's.
    corpus = Corpus([parse_python("app/sitemaps.py", SITEMAPS)])
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/site-packages/app/sitemaps.py", line 20, in index\n'
        '  File "/site-packages/app/sitemaps.py", '
        + innermost
        + "ValueError: max() arg is an empty sequence\n"
    )
    report = "Sitemaps with a callable lastmod raise ValueError: lastmod, lastmod\n" + trace
    hit = rank(corpus, mine(report), k=1)[0]
    assert hit.units[0].qualname == expected
    plain = rank(corpus, mine(report.split("Traceback")[0]), k=1)[0]
    assert plain.units[0].qualname == "GenericSitemap.lastmod"  # the words alone


def test_a_file_reached_along_an_edge_says_which(corpus: Corpus) -> None:
    hits = rank(corpus, mine("Config.from_file crashes when the file is missing"), k=5)
    cli = next(h for h in hits if h.path == "app/cli.py")
    assert "imports `app/config.py`" in cli.reasons
    hits = rank(corpus, mine("test_route_keeps_the_rule fails"), k=5)
    routing = next(h for h in hits if h.path == "app/routing.py")
    assert "tested by `tests/test_routing.py`" in routing.reasons


def test_a_path_with_a_backtick_stays_one_code_span_in_the_edge_it_gives() -> None:
    files = {
        "app/we`ird.js": "export function reloadSettings(path) {\n  return path;\n}\n",
        "app/main.js": 'import { reloadSettings } from "./we`ird.js";\nexport const x = 1;\n',
    }
    corpus = Corpus(parse_file(path, text.encode(), "javascript") for path, text in files.items())
    hits = rank(corpus, mine("reloadSettings drops the path"), k=2)
    assert hits[0].path == "app/we`ird.js"
    # Wrapped in a longer fence: one code span, not `app/we` and a stray `ird.js`.
    assert "imports ``app/we`ird.js``" in hits[1].reasons


_LOCALE = {
    "src/locale/sv.js": (
        "// Swedish [sv]\nconst locale = {\n  name: 'sv',\n"
        "  weekdays: 'söndag_måndag_tisdag'.split('_'),\n"
        "  months: 'januari_februari_mars'.split('_'),\n  ordinal: n => `${n}e`,\n"
        "  formats: { LT: 'HH:mm', L: 'YYYY-MM-DD' }\n}\n"
        "export default locale\n"
    ),
    "src/plugin/advancedFormat.js": (
        "export default (o, c) => {\n  const proto = c.prototype\n"
        "  proto.format = function (formatStr) {\n    const locale = this.$locale()\n"
        "    // Do ordinal for the locale's day of month\n    return locale.ordinal(this.$D)\n"
        "  }\n}\n"
    ),
    "src/index.js": (
        "class Dayjs {\n  format(formatStr) { return formatStr }\n"
        "  locale(preset) { return preset }\n}\nexport default Dayjs\n"
    ),
}


@pytest.mark.parametrize(
    ("share", "first"), [(0.0, "src/plugin/advancedFormat.js"), (0.7, "src/locale/sv.js")]
)
def test_a_file_without_functions_has_its_text_for_a_unit(
    monkeypatch: pytest.MonkeyPatch, share: float, first: str
) -> None:
    from nexusd.code import evidence
    from nexusd.code.lang_treesitter import parse_treesitter

    parsed = [parse_treesitter(path, text, "javascript") for path, text in _LOCALE.items()]
    corpus = Corpus(p for p in parsed if p is not None)
    table = corpus.index["src/locale/sv.js"]
    assert list(corpus.unitless) == [table]  # a table of values: no class, no function
    monkeypatch.setattr(evidence, "UNITLESS_SHARE", share)
    # Without its text as a unit, the table's words count once where the plugin's count
    # twice (in the file and in its best unit), and the plugin ranks first.
    assert top(corpus, "Ordinal formatting in Swedish")[0] == first


@pytest.mark.parametrize(
    ("query", "path"), [("save!", "lib/record.rb"), ("valid?", "lib/checker.rb")]
)
def test_a_ruby_name_with_its_mark_finds_the_method_so_named(query: str, path: str) -> None:
    files = {
        "lib/record.rb": "class Record\n  def save!\n    persist\n  end\nend\n",
        "lib/draft.rb": "class Draft\n  def save\n    true\n  end\nend\n",
        "lib/checker.rb": "class Checker\n  def valid?\n    true\n  end\nend\n",
        "lib/form.rb": "class Form\n  def valid\n    true\n  end\nend\n",
    }
    found = Corpus(parse_file(p, t.encode(), "ruby") for p, t in files.items())
    hits = rank(found, mine(f"`{query}`"), k=4)
    assert hits[0].path == path
    assert f"defines `{hits[0].units[0].qualname}`" in hits[0].reasons


@pytest.mark.parametrize("spelled", ["Cache.get", "Cache::get", "Cache->get", "Cache#get"])
def test_a_member_named_with_its_owner_finds_the_owners_file(spelled: str) -> None:
    # `get` is too common a word to count alone, and two classes define it.
    files = {
        "src/Cache.php": "<?php\nclass Cache {\n  public function get($k) { return 1; }\n}\n",
        "src/Store.php": "<?php\nclass Store {\n  public function get($k) { return 2; }\n}\n",
        "src/Cachey.php": "<?php\nclass Other {\n  public function cache_size() { return 3; }\n}\n",
    }
    found = Corpus(parse_file(p, t.encode(), "php") for p, t in files.items())
    hits = rank(found, mine(f"`{spelled}` returns null after a flush"), k=3)
    assert hits[0].path == "src/Cache.php"
    assert "defines `Cache.get`" in hits[0].reasons
    assert "src/Store.php" not in [h.path for h in hits[:1]]
