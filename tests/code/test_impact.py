"""The impact graph: imports, importers, callers and subclasses of a file or symbol."""

from __future__ import annotations

import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.impact import impact
from nexusd.code.lang_python import parse_python
from nexusd.code.lang_treesitter import parse_treesitter
from nexusd.code.parsers import language_for, parse_file

FILES = {
    "shop/cart.py": (
        "from shop.prices import price_of\n\n\nclass Cart:\n"
        "    def total(self, items):\n        return sum(price_of(i) for i in items)\n"
    ),
    "shop/prices.py": "def price_of(item):\n    return item.price\n",
    "shop/gift.py": "from shop.cart import Cart\n\n\nclass GiftCart(Cart):\n    pass\n",
    "shop/other.py": "def total(x):\n    return Cart\n",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\ndef test_total():\n    assert Cart().total([]) == 0\n"
    ),
}


def corpus() -> Corpus:
    return Corpus(parse_python(path, text) for path, text in FILES.items())


def test_file_impact_lists_imports_and_importers() -> None:
    found = impact(corpus(), "shop/cart.py")
    assert [(e.path, e.kind) for e in found.uses] == [("shop/prices.py", "imports")]
    assert [(e.path, e.kind) for e in found.used_by] == [
        ("shop/gift.py", "imported-by"),
        ("tests/test_cart.py", "test"),
    ]


def test_symbol_impact_lists_subclasses_callers_and_name_matches() -> None:
    found = impact(corpus(), "shop/cart.py", "Cart")
    edges = [(e.path, e.symbol, e.kind) for e in found.used_by]
    assert ("shop/gift.py", "GiftCart", "subclass") in edges
    assert ("tests/test_cart.py", "test_total", "test") in edges
    # shop/other.py does not import cart.py: a name match only, marked uncertain.
    assert ("shop/other.py", "total", "calls?") in edges
    assert edges.index(("shop/other.py", "total", "calls?")) == len(edges) - 1


def test_what_a_function_uses() -> None:
    found = impact(corpus(), "shop/cart.py", "Cart.total")
    assert [(e.path, e.symbol, e.kind) for e in found.uses] == [
        ("shop/prices.py", "price_of", "calls")
    ]


def test_unknown_file_is_explained() -> None:
    found = impact(corpus(), "nope.py")
    assert found.note == "`nope.py` is not in the code index"


def test_callees_resolve_as_python_would_and_guesses_are_marked() -> None:
    files = {
        "app/config.py": (
            "from app.io import load\n\n\nclass Config:\n"
            "    def from_file(self, path):\n"
            "        with open(path) as fh:\n"
            "            return self.update(load(fh), unique_helper(), read())\n"
            "    def update(self, data, *rest):\n        return data\n"
        ),
        "app/io.py": "def load(fh):\n    return fh.read()\n",
        "app/misc.py": "def unique_helper():\n    return 1\n\n\ndef read():\n    return 2\n",
        "app/client.py": (
            "class Client:\n    def open(self):\n        pass\n\n"
            "    def read(self):\n        pass\n"
        ),
        "tests/test_config.py": (
            "def test_from_file():\n    def load(fh):\n        return {}\n    return load\n"
        ),
        "web/app.ts": "export function update(x: number) {\n  return from_file(x);\n}\n",
    }
    parsed = [
        parse_treesitter(p, t, "typescript") if p.endswith(".ts") else parse_python(p, t)
        for p, t in files.items()
    ]
    found = impact(Corpus(p for p in parsed if p is not None), "app/config.py", "Config.from_file")
    assert [(e.path, e.symbol, e.kind) for e in found.uses] == [
        ("app/config.py", "Config.update", "calls"),  # the same file first
        ("app/io.py", "load", "calls"),  # imported: not the test's local `load`
        ("app/misc.py", "unique_helper", "calls?"),  # one file defines it, not imported
    ]  # `open` is the builtin; `read` is defined in two files the module does not import
    used_by = impact(Corpus(p for p in parsed if p is not None), "app/config.py", "from_file")
    assert all(not e.path.endswith(".ts") for e in used_by.used_by)  # not callable from there


def test_with_sources_prose_is_no_call_and_an_import_of_the_name_is_an_edge() -> None:
    files = {
        "shop/cart.py": (
            "class Cart:\n    def run(self):\n        return 1\n\n"
            "    def total(self):\n        return self.run()\n"
        ),
        "shop/ctx.py": (
            "from shop.cart import Cart\n\n\ndef after():\n"
            '    """Decorate a function to run after the request."""\n'
            "    # run it later\n    return 'run'\n"
        ),
        "shop/api.py": "from shop.cart import (\n    Cart,\n)\n\n__all__ = ['Cart']\n",
        "shop/uses.py": "from shop.cart import Cart\n\n\ndef go(cart):\n    return cart.run()\n",
    }
    corpus = Corpus(parse_python(path, text) for path, text in files.items())

    runs = impact(corpus, "shop/cart.py", "Cart.run", source=files.get)
    edges = {(e.path, e.symbol, e.kind) for e in runs.used_by}
    assert ("shop/uses.py", "go", "calls") in edges
    assert ("shop/cart.py", "Cart.total", "calls") in edges
    assert not any(path == "shop/ctx.py" for path, _, _ in edges)  # a docstring, a comment
    # Without the sources, the index's names alone: the docstring's "run" counts.
    assert any(e.path == "shop/ctx.py" for e in impact(corpus, "shop/cart.py", "Cart.run").used_by)

    cart = impact(corpus, "shop/cart.py", "Cart", source=files.get)
    lines = {(e.path, e.line, e.kind) for e in cart.used_by}
    assert ("shop/api.py", 2, "imported-by") in lines  # a re-export names the class
    assert cart.uses == ()  # its methods' code is theirs, not the class's own


@pytest.mark.parametrize(
    ("files", "target", "caller"),
    [
        (  # a call inside an f-string's braces is code
            {
                "shop/calc.py": "def compute_total(items):\n    return sum(items)\n",
                "shop/view.py": (
                    "from shop.calc import compute_total\n\n\ndef render(items):\n"
                    '    return f"total: {compute_total(items)}"\n'
                ),
            },
            ("shop/calc.py", "compute_total"),
            ("shop/view.py", "render"),
        ),
        (  # and inside a template literal's ${…}
            {
                "src/calc.js": "export function computeTotal(items) {\n  return 1;\n}\n",
                "src/view.js": (
                    "import { computeTotal } from './calc.js';\n\n"
                    "export function render(items) {\n"
                    "  return `total: ${computeTotal(items)}`;\n}\n"
                ),
            },
            ("src/calc.js", "computeTotal"),
            ("src/view.js", "render"),
        ),
        (  # a regex literal's `\/\/` is no comment
            {
                "src/net.js": "export function fetchRemote(u) {\n  return u;\n}\n",
                "src/load.js": (
                    "import { fetchRemote } from './net.js';\n\nexport function load(url) {\n"
                    "  if (/^https?:\\/\\//.test(url)) return fetchRemote(url);\n"
                    "  return null;\n}\n"
                ),
            },
            ("src/net.js", "fetchRemote"),
            ("src/load.js", "load"),
        ),
        (  # Rust lifetimes are not character literals
            {
                "src/lib.rs": "pub fn tokenize(s: &str, c: char) -> Vec<&str> {\n    vec![]\n}\n",
                "src/main.rs": (
                    "use crate::lib::tokenize;\n\n"
                    "fn split<'a>(s: &'a str) -> Vec<&'a str> { tokenize(s, ',') }\n"
                ),
            },
            ("src/lib.rs", "tokenize"),
            ("src/main.rs", "split"),
        ),
    ],
    ids=["f-string", "template-literal", "regex-literal", "rust-lifetimes"],
)
def test_calls_inside_code_shaped_literals_are_calls(
    files: dict[str, str], target: tuple[str, str], caller: tuple[str, str]
) -> None:
    parsed = [parse_file(p, t.encode(), language_for(p) or "text") for p, t in files.items()]
    found = impact(Corpus(parsed), *target, source=files.get)
    assert caller in {(e.path, e.symbol) for e in found.used_by}


def test_a_method_is_never_imported_by_name() -> None:
    files = {
        "shop/cart.py": "class Cart:\n    def run(self):\n        return 1\n",
        "shop/cli.py": (
            "import subprocess\nfrom shop.cart import Cart\n\n\nsubprocess.run(['ls'])\n"
        ),
    }
    corpus = Corpus(parse_python(p, t) for p, t in files.items())
    found = impact(corpus, "shop/cart.py", "Cart.run", source=files.get)
    assert not any(e.kind == "imported-by" for e in found.used_by)


def test_a_python_file_named_mod_or_index_is_a_module_of_its_own() -> None:
    """Not its package (`mod.rs` and `index.js` are their folder's own file; `mod.py` is not)."""
    files = {
        "calc/__init__.py": "from calc.mod import Mod\n",
        "calc/mod.py": "from .numbers import nan\n\nclass Mod:\n    pass\n",
        "calc/numbers.py": "nan = 0\n",
        "calc/index.py": "from calc.mod import Mod\n",
    }
    corpus = Corpus(parse_python(path, text) for path, text in files.items())
    mod, numbers, index = (corpus.index[f"calc/{n}.py"] for n in ("mod", "numbers", "index"))
    assert corpus.files[mod].file_unit.qualname == "calc.mod"
    assert corpus.imports[mod] == {numbers}  # `.numbers` is calc.numbers, not a top-level one
    assert corpus.imports[index] == {mod} and corpus.resolve_dotted("calc.mod.Mod") == mod


def test_a_name_passed_on_is_no_call_and_a_constructor_is_called_by_its_class() -> None:
    files = {
        "web/models.py": (
            "class Response:\n    def json(self):\n        return {}\n\n\n"
            "class Setup:\n    def __init__(self, app):\n        self.app = app\n"
        ),
        "web/sessions.py": (
            "from web.models import Response, Setup\n\n\n"
            "def request(url, json=None):\n    send(url, json=json)\n    return Response()\n\n\n"
            "def make(app):\n    state = Setup(app)\n    return state\n\n\n"
            "class Other:\n    def __init__(self):\n        pass\n"
        ),
    }
    corpus = Corpus(parse_python(p, t) for p, t in files.items())
    uses = impact(corpus, "web/sessions.py", "request", source=files.get).uses
    # `json=json` passes a value on: a name, not a call of `Response.json`.
    assert ("web/models.py", "Response.json", "names") in {(e.path, e.symbol, e.kind) for e in uses}
    built = impact(corpus, "web/models.py", "Setup.__init__", source=files.get).used_by
    # Where `Setup(app)` runs, at the call's line; not every other `__init__`.
    assert [(e.path, e.line, e.symbol, e.kind) for e in built] == [
        ("web/sessions.py", 10, "make", "calls")
    ]


PHP_RUBY = {
    "src/Support/Money.php": (
        "<?php\nnamespace App\\Support;\nclass Money {\n"
        "    public function __construct(int $v) { $this->v = $v; }\n"
        "    public static function zero(): Money { return new Money(0); }\n}\n"
    ),
    "src/Billing.php": (
        "<?php\nnamespace App;\nuse App\\Support\\Money;\nclass Billing {\n"
        "    public function due() { return new Money(5); }\n}\n"
    ),
    "lib/cart.rb": "class Cart\n  def initialize(items)\n    @items = items\n  end\nend\n",
    "lib/shop.rb": (
        'require "cart"\nclass Shop\n  def fill\n    Cart.new([])\n  end\n'
        "  def total\n    zero\n  end\nend\n"
    ),
}


def _php_ruby() -> Corpus:
    parsed = [parse_file(p, t.encode(), language_for(p) or "text") for p, t in PHP_RUBY.items()]
    return Corpus(parsed)


@pytest.mark.parametrize(
    ("path", "symbol", "caller"),
    [
        ("src/Support/Money.php", "Money.__construct", ("src/Billing.php", "App.Billing.due")),
        ("lib/cart.rb", "Cart#initialize", ("lib/shop.rb", "Shop.fill")),
    ],
)
def test_php_and_ruby_constructors_run_where_their_class_is_made(
    path: str, symbol: str, caller: tuple[str, str]
) -> None:
    found = impact(_php_ruby(), path, symbol, source=PHP_RUBY.get)
    assert caller in {(e.path, e.symbol) for e in found.used_by}


def test_a_php_file_that_uses_a_namespaced_class_at_its_top_level_is_an_importer() -> None:
    routes = "<?php\nuse App\\Support\\Money;\n\nRoute::get('/', [Money::class, 'zero']);\n"
    files = {**PHP_RUBY, "routes/web.php": routes}
    parsed = [parse_file(p, t.encode(), language_for(p) or "text") for p, t in files.items()]
    found = impact(Corpus(parsed), "src/Support/Money.php", "Money", source=files.get)
    assert ("routes/web.php", 2, "imported-by") in {(e.path, e.line, e.kind) for e in found.used_by}


def test_a_guess_by_name_stays_in_its_own_language() -> None:
    # `zero` is defined once in the repository, by PHP: Ruby's `zero` is not that method.
    found = impact(_php_ruby(), "lib/shop.rb", "Shop.total", source=PHP_RUBY.get)
    assert found.uses == ()


@pytest.mark.parametrize(
    ("spelled", "symbol"),
    [
        ("Money->zero", "Money.zero"),
        ("Support\\Money::zero", "Support.Money.zero"),
        ("\\App\\Support\\Money", "App.Support.Money"),
    ],
)
def test_php_spellings_name_the_symbol(spelled: str, symbol: str) -> None:
    found = impact(_php_ruby(), "src/Support/Money.php", spelled, source=PHP_RUBY.get)
    assert (found.symbol, found.note) == (symbol, "")


@pytest.mark.parametrize("spelled", ["Cart::total", "Cart#total", "(*Cart).total", "(Cart).total"])
def test_other_languages_member_syntax_names_the_same_symbol(spelled: str) -> None:
    found = impact(corpus(), "shop/cart.py", spelled)
    assert (found.symbol, found.note) == ("Cart.total", "")
    assert found.uses == impact(corpus(), "shop/cart.py", "Cart.total").uses


@pytest.mark.parametrize(
    "symbol",
    [
        'describe("Array").describe("#indexOf()")',
        'describe("Array").describe("#indexOf()").it("handles foo(bar)")',
        'describe("Array").it("keeps Foo::bar")',
    ],
)
def test_a_test_blocks_title_is_taken_as_written(symbol: str) -> None:
    source = (
        "const { find } = require('../lib/find')\n"
        "describe('Array', () => {\n"
        "  describe('#indexOf()', () => {\n"
        "    it('handles foo(bar)', () => { find(1) })\n"
        "  })\n"
        "  it('keeps Foo::bar', () => {})\n"
        "})\n"
    )
    files = {"test/array.test.js": source, "lib/find.js": "function find(x) { return x }\n"}
    parsed = [parse_treesitter(p, t, "javascript") for p, t in files.items()]
    corpus = Corpus(p for p in parsed if p is not None)
    found = impact(corpus, "test/array.test.js", symbol, source=files.get)
    # `#`, `::` and `(bar)` are no member syntax inside a title: the unit is found.
    assert (found.symbol, found.note) == (symbol, "")


def test_a_javascript_private_member_keeps_its_hash() -> None:
    source = "class Cart {\n  #total(items) { return 0 }\n  sum() { return this.#total([]) }\n}\n"
    parsed = parse_treesitter("src/cart.js", source, "javascript")
    assert parsed is not None
    assert "Cart.#total" in [u.qualname for u in parsed.units]
    found = impact(
        Corpus([parsed]), "src/cart.js", "Cart.#total", source={"src/cart.js": source}.get
    )
    assert (found.symbol, found.note) == ("Cart.#total", "")


def test_a_cut_list_says_it_was_cut() -> None:
    files = {"lib/core.py": "def helper():\n    return 1\n"}
    for i in range(60):
        files[f"lib/user_{i:02}.py"] = (
            f"from lib.core import helper\n\n\ndef use_{i}():\n    return helper()\n"
        )
    files["lib/all.py"] = "".join(f"import lib.user_{i:02}\n" for i in range(60))
    built = Corpus(parse_python(p, t) for p, t in files.items())

    callers = impact(built, "lib/core.py", "helper", source=files.get)
    assert len(callers.used_by) == 50
    assert "the first 50" in callers.note and "more" in callers.note
    imports = impact(built, "lib/all.py")
    assert len(imports.uses) == 50 and "the first 50 of 60" in imports.note
    # Nothing cut: nothing said.
    assert impact(built, "lib/user_00.py", "use_0", source=files.get).note == ""


def test_c_callers_that_include_the_header_are_certain() -> None:
    files = {
        "src/jv.h": "int jv_number(double x);\n",
        "src/jv.c": '#include "jv.h"\n\nint jv_number(double x) {\n  return (int)x;\n}\n',
        "src/builtin.c": ('#include "jv.h"\n\nint f_length(void) {\n  return jv_number(1.0);\n}\n'),
        "src/other.c": "int f_other(void) {\n  return jv_number(2.0);\n}\n",
    }
    parsed = [parse_treesitter(p, t, "c") for p, t in files.items()]
    built = Corpus(p for p in parsed if p is not None)

    found = impact(built, "src/jv.c", "jv_number", source=files.get)
    edges = {(e.path, e.line, e.kind) for e in found.used_by}
    # builtin.c includes the header that declares it; other.c only says the name.
    assert ("src/builtin.c", 4, "calls") in edges
    assert ("src/other.c", 2, "calls?") in edges


def test_a_type_and_its_impl_blocks_are_one_callee() -> None:
    text = (
        "pub struct Version(usize);\n\n"
        "impl Version {\n    pub fn next(self) -> Version {\n"
        "        Version(self.0 + 1)\n    }\n}\n\n"
        "impl Clone for Version {\n    fn clone(&self) -> Self {\n"
        "        Version(self.0)\n    }\n}\n\n"
        "pub fn bump(v: Version) -> Version {\n    v.next()\n}\n"
    )
    parsed = parse_treesitter("src/version.rs", text, "rust")
    assert parsed is not None
    found = impact(Corpus([parsed]), "src/version.rs", "bump", source={"src/version.rs": text}.get)
    # The struct is where `Version` is written; its `impl` blocks are not three more callees.
    assert [(e.line, e.symbol) for e in found.uses if e.symbol == "Version"] == [(1, "Version")]
