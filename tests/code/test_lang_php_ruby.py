"""PHP and Ruby through their grammar wheels (lang_treesitter, lang_queries, ts_imports): units,
names, docs, bases, imports, own text, and the import graph they give the corpus."""

from __future__ import annotations

from collections import Counter

import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.lang_treesitter import parse_treesitter
from nexusd.code.parsers import language_for, parse_file
from nexusd.code.units import CodeUnit, ParsedFile

PHP = """\
<?php

/**
 * Collections of items.
 */

namespace Illuminate\\Support;

use Illuminate\\Contracts\\Support\\Arrayable;
use Illuminate\\Support\\Traits\\{Macroable, Conditionable as When};
use function Illuminate\\Support\\enum_value;

/**
 * An ordered list of items.
 */
#[\\AllowDynamicProperties]
class Collection extends BaseCollection implements Arrayable, \\Countable
{
    use Macroable;

    const LIMIT = 10;
    protected $items = [];

    /**
     * Create a new collection.
     */
    public function __construct($items = [])
    {
        $this->items = $this->getArrayableItems($items);
    }

    public static function times(int $n): static
    {
        return new static(range(1, $n));
    }
}

interface Shape
{
    public function area(): float;
}

trait Greets
{
    public function hello() { return 'hi'; }
}

enum Suit: string
{
    case Hearts = 'H';

    public function color(): string { return 'red'; }
}

if (! function_exists('collect')) {
    // Create a collection from the given value.
    function collect($value = [])
    {
        return new Collection($value);
    }
}
"""

RUBY = """\
# frozen_string_literal: true

require 'set'
require "rubocop/cop/base"
require_relative 'mixin/range_help'
require "plugins/#{name}"

module RuboCop
  module Cop
    # Checks the length of lines.
    #
    # @example
    #   # bad
    class LineLength < Base
      include RangeHelp
      MSG = 'Line is too long.'
      attr_reader :max

      def on_new_investigation
        check_line(processed_source.lines)
      end

      # Cops this one must not correct beside.
      def self.autocorrect_incompatible_with
        [Layout::Foo]
      end

      class << self
        def badge
          'Layout/LineLength'
        end
      end

      private

      def check_line(line) = line.length > max
    end
  end
end

def top_level(x)
  x + 1
end
"""

SOURCES = {"php": ("src/Illuminate/Support/Collection.php", PHP), "ruby": ("lib/line.rb", RUBY)}


def _corpus(files: dict[str, str]) -> Corpus:
    return Corpus(parse_file(p, text.encode(), language_for(p) or "") for p, text in files.items())


def parse(language: str) -> ParsedFile:
    """The sample's parse, which must succeed without errors."""
    path, source = SOURCES[language]
    parsed = parse_treesitter(path, source, language)
    assert parsed is not None, f"no grammar for {language}"
    assert (parsed.status, parsed.note) == ("ok", "")
    return parsed


def units(language: str) -> dict[str, CodeUnit]:
    return {u.qualname: u for u in parse(language).units[1:]}


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        (
            "php",
            [
                # from the attribute above the class
                ("class", "Illuminate.Support.Collection", 16, 36),
                ("method", "Illuminate.Support.Collection.__construct", 27, 30),
                ("method", "Illuminate.Support.Collection.times", 32, 35),
                ("class", "Illuminate.Support.Shape", 38, 41),
                ("method", "Illuminate.Support.Shape.area", 40, 40),
                ("class", "Illuminate.Support.Greets", 43, 46),
                ("method", "Illuminate.Support.Greets.hello", 45, 45),
                ("class", "Illuminate.Support.Suit", 48, 53),
                ("method", "Illuminate.Support.Suit.color", 52, 52),
                # a helper declared inside `if (! function_exists(…)) { … }`
                ("function", "Illuminate.Support.collect", 57, 60),
            ],
        ),
        (
            "ruby",
            [
                ("class", "RuboCop.Cop.LineLength", 14, 37),
                ("method", "RuboCop.Cop.LineLength.on_new_investigation", 19, 21),
                ("method", "RuboCop.Cop.LineLength.autocorrect_incompatible_with", 24, 26),
                ("method", "RuboCop.Cop.LineLength.badge", 29, 31),  # in `class << self`
                ("method", "RuboCop.Cop.LineLength.check_line", 36, 36),  # an endless method
                ("function", "top_level", 41, 43),
            ],
        ),
    ],
)
def test_units_kinds_qualnames_and_lines(
    language: str, expected: list[tuple[str, str, int, int]]
) -> None:
    assert [(u.kind, u.qualname, u.start, u.end) for u in parse(language).units[1:]] == expected


@pytest.mark.parametrize(
    "source",
    [
        "<?php\nnamespace App {\n    class User {}\n}\nnamespace Lib {\n    class User {}\n}\n",
        # without braces, a namespace holds what follows it, up to the next one
        "<?php\nnamespace App;\nclass User {}\nnamespace Lib;\nclass User {}\n",
    ],
)
def test_php_namespaces_prefix_qualnames(source: str) -> None:
    parsed = parse_treesitter("app/User.php", source, "php")
    assert parsed is not None
    assert [u.qualname for u in parsed.units[1:]] == ["App.User", "Lib.User"]


@pytest.mark.parametrize(
    ("language", "qualname", "defines"),
    [
        ("php", "", ("Collection", "Shape", "Greets", "Suit", "collect")),
        (
            "php",
            "Illuminate.Support.Collection",
            ("Collection", "LIMIT", "items", "__construct", "times"),
        ),
        ("php", "Illuminate.Support.Suit", ("Suit", "Hearts", "color")),
        # Ruby's modules, like C++'s namespaces, are scopes: their classes are the file's.
        ("ruby", "", ("LineLength", "top_level")),
        (
            "ruby",
            "RuboCop.Cop.LineLength",
            (
                "LineLength",
                "MSG",
                "on_new_investigation",
                "autocorrect_incompatible_with",
                "badge",
                "check_line",
            ),
        ),
    ],
)
def test_defines_own_name_and_members(language: str, qualname: str, defines: tuple[str]) -> None:
    found = {u.qualname if u.kind != "file" else "": u for u in parse(language).units}
    assert found[qualname].defines == defines


@pytest.mark.parametrize(
    ("language", "qualname", "doc"),
    [
        ("php", "", "Collections of items."),
        ("php", "Illuminate.Support.Collection", "An ordered list of items."),
        ("php", "Illuminate.Support.Collection.__construct", "Create a new collection."),
        ("php", "Illuminate.Support.collect", "Create a collection from the given value."),
        # Ruby keeps the comments between `module Cop` and the class outside the body.
        ("ruby", "RuboCop.Cop.LineLength", "Checks the length of lines. @example # bad"),
        (
            "ruby",
            "RuboCop.Cop.LineLength.autocorrect_incompatible_with",
            "Cops this one must not correct beside.",
        ),
        ("ruby", "RuboCop.Cop.LineLength.on_new_investigation", ""),
    ],
)
def test_doc_comments(language: str, qualname: str, doc: str) -> None:
    found = {u.qualname if u.kind != "file" else "": u for u in parse(language).units}
    assert found[qualname].doc == doc


@pytest.mark.parametrize(
    ("language", "qualname", "bases"),
    [
        ("php", "Illuminate.Support.Collection", ("BaseCollection", "Arrayable", "Countable")),
        ("ruby", "RuboCop.Cop.LineLength", ("Base",)),
    ],
)
def test_bases_as_dotted_names(language: str, qualname: str, bases: tuple[str, ...]) -> None:
    assert units(language)[qualname].bases == bases


@pytest.mark.parametrize(
    ("language", "imports"),
    [
        (
            "php",
            (
                "Illuminate/Contracts/Support/Arrayable.php",
                "Illuminate/Support/Traits/Macroable.php",
                "Illuminate/Support/Traits/Conditionable.php",
                "Illuminate/Support/enum_value.php",
            ),
        ),
        # `require` searches a gem's lib/; an interpolated name is only known at run time.
        ("ruby", ("lib/set.rb", "lib/rubocop/cop/base.rb", "./mixin/range_help.rb")),
    ],
)
def test_imports_on_the_file_unit(language: str, imports: tuple[str, ...]) -> None:
    assert parse(language).units[0].imports == imports


def test_signatures_are_headers() -> None:
    php, ruby = units("php"), units("ruby")
    assert php["Illuminate.Support.Collection.times"].signature == (
        "public static function times(int $n): static"
    )
    assert ruby["RuboCop.Cop.LineLength"].signature == "class LineLength < Base"
    assert ruby["RuboCop.Cop.LineLength.autocorrect_incompatible_with"].signature == (
        "def self.autocorrect_incompatible_with"
    )


def test_a_comment_inside_a_php_header_ends_no_signature() -> None:
    source = (
        "<?php\nclass S {\n    public /* api */ function r(int $a): int { return 1; }\n"
        "    #[Route('/x')] // the x route\n    public function x() {}\n}\n"
    )
    parsed = parse_treesitter("src/S.php", source, "php")
    assert parsed is not None
    signatures = {u.qualname: u.signature for u in parsed.units}
    assert signatures["S.r"] == "public /* api */ function r(int $a): int"
    assert signatures["S.x"].endswith("public function x()")


def test_uses_are_identifiers_of_the_own_body() -> None:
    assert units("php")["Illuminate.Support.collect"].uses == ("value", "Collection")
    assert units("ruby")["RuboCop.Cop.LineLength.on_new_investigation"].uses == (
        "check_line",
        "processed_source",
        "lines",
    )


@pytest.mark.parametrize("language", list(SOURCES))
def test_every_line_is_in_exactly_one_units_text(language: str) -> None:
    source = SOURCES[language][1]
    own = Counter(
        line for u in parse(language).units for line in u.text.split("\n") if line.strip()
    )
    assert own == Counter(line for line in source.split("\n") if line.strip())


@pytest.mark.parametrize(
    ("path", "source", "note", "qualnames"),
    [
        (
            "broken.php",
            "<?php\nclass A {\n    public function f( {\n    }\n}\n",
            "line 3: missing )",
            ["A", "A.f"],
        ),
        # The unclosed `def` makes the whole class an error: only the file is a unit.
        ("broken.rb", "class A\n  def f(\n    1 +\n  end\n", "line 1: syntax error", []),
    ],
)
def test_syntax_errors_keep_what_parses_and_say_where(
    path: str, source: str, note: str, qualnames: list[str]
) -> None:
    parsed = parse_file(path, source.encode(), language_for(path) or "")
    assert (parsed.status, parsed.note) == ("syntax-error", note)
    assert [u.qualname for u in parsed.units[1:]] == qualnames


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.php", "php"),
        ("lib/a.rb", "ruby"),
        ("lib/tasks/db.rake", "ruby"),
        ("tool.gemspec", "ruby"),
        ("config.ru", "ruby"),
        ("Rakefile", "text"),
    ],
)
def test_extensions(path: str, language: str) -> None:
    assert language_for(path) == language


def test_php_use_and_ruby_require_are_import_edges() -> None:
    files = {
        "src/App/Models/User.php": "<?php\nnamespace App\\Models;\nclass User {}\n",
        "src/App/Http/Controller.php": (
            "<?php\nnamespace App\\Http;\nuse App\\Models\\User;\nuse Vendor\\Thing;\n"
            "class Controller { function show() { return new User(); } }\n"
        ),
        # PSR-4 maps the vendor's namespace to `lib/`: `Acme\Cookie\Jar` is lib/Cookie/Jar.php
        "lib/Cookie/Jar.php": "<?php\nnamespace Acme\\Cookie;\nclass Jar {}\n",
        "lib/Client.php": "<?php\nnamespace Acme;\nuse Acme\\Cookie\\Jar;\nclass Client {}\n",
        "lib/gem/core.rb": "module Gem\n  class Core\n  end\nend\n",
        "lib/gem/util/set.rb": "class Set\nend\n",
        "lib/gem/cli.rb": "require 'gem/core'\nrequire 'set'\nrequire_relative 'util/set'\n",
    }
    corpus = _corpus(files)
    index = corpus.index
    assert corpus.imports[index["src/App/Http/Controller.php"]] == {
        index["src/App/Models/User.php"]
    }
    assert corpus.imports[index["lib/Client.php"]] == {index["lib/Cookie/Jar.php"]}
    # `require 'set'` is the standard library's: no `lib/set.rb` here.
    assert corpus.imports[index["lib/gem/cli.rb"]] == {
        index["lib/gem/core.rb"],
        index["lib/gem/util/set.rb"],
    }
    assert index["lib/gem/cli.rb"] in corpus.importers[index["lib/gem/core.rb"]]


def test_php_use_resolves_by_the_declared_namespace_not_the_path() -> None:
    files = {
        # a split package: the class's namespace is not its folder
        "src/Illuminate/Collections/Collection.php": (
            "<?php\nnamespace Illuminate\\Support;\nclass Collection {}\n"
        ),
        # a type-test file lying at the path the name spells
        "types/Support/Collection.php": "<?php\n$c = new Illuminate\\Support\\Collection();\n",
        "src/Composer/Console/Application.php": (
            "<?php\nnamespace Composer\\Console;\nclass Application {}\n"
        ),
        "src/Illuminate/Http/Request.php": (
            "<?php\nnamespace Illuminate\\Http;\nuse Illuminate\\Support\\Collection;\n"
            "use Symfony\\Component\\Console\\Application;\nclass Request {}\n"
        ),
    }
    corpus = _corpus(files)
    request = corpus.index["src/Illuminate/Http/Request.php"]
    # the vendor's `Application` is not the repository's `Composer\Console\Application`
    assert corpus.imports[request] == {corpus.index["src/Illuminate/Collections/Collection.php"]}


@pytest.mark.parametrize(
    ("source", "qualnames"),
    [
        # operators and setters keep their names
        (
            "class H\n  def [](k); end\n  def []=(k, v); end\n  def <=>(o); end\n"
            "  def name=(v); end\nend\n",
            ["H", "H.[]", "H.[]=", "H.<=>", "H.name="],
        ),
        # methods a call, a block or a branch holds are the class's
        (
            "class Q\n  private def normalize(x) = x\n  memoize def cached; end\n"
            "  if RUBY_VERSION > '3'\n    def clock; 1; end\n  else\n    def clock; 2; end\n  end\n"
            "  included do\n    def hook; end\n  end\nend\n",
            ["Q", "Q.normalize", "Q.cached", "Q.clock", "Q.clock", "Q.hook"],
        ),
        ("Point = Struct.new(:x, :y) do\n  def norm; x; end\nend\n", ["Point.norm"]),
        # a module of methods is a mixin, a unit; a module of classes only a namespace
        (
            "module Shop\n  module Auditable\n    def audit!; end\n    def self.log(x); end\n"
            "  end\n  module Helpers\n    private def h; end\n  end\n"
            "  class Invoice\n    include Auditable\n  end\nend\n",
            [
                "Shop.Auditable",
                "Shop.Auditable.audit!",
                "Shop.Auditable.log",
                "Shop.Helpers",
                "Shop.Helpers.h",
                "Shop.Invoice",
            ],
        ),
        # a class named by its scope is the scope's; `::Top` is the root's
        (
            "module R\n  class Cop::Base\n    def on_send; end\n  end\n  class ::Top; end\nend\n",
            ["R.Cop.Base", "R.Cop.Base.on_send", "Top"],
        ),
    ],
)
def test_ruby_methods_wherever_written(source: str, qualnames: list[str]) -> None:
    parsed = parse_treesitter("lib/q.rb", source, "ruby")
    assert parsed is not None
    assert [u.qualname for u in parsed.units[1:]] == qualnames


def test_php_functions_in_every_branch_are_units() -> None:
    source = (
        "<?php\nif (PHP_VERSION_ID > 80000) {\n    function a() {}\n} elseif (X) {\n"
        "    function a() {}\n} else {\n    function a() {}\n}\n"
    )
    parsed = parse_treesitter("compat.php", source, "php")
    assert parsed is not None
    assert [(u.qualname, u.start) for u in parsed.units[1:]] == [("a", 3), ("a", 5), ("a", 7)]


def test_a_comment_after_the_header_is_not_the_signature() -> None:
    source = (
        "class Foo # the foo\n  # Documents bar\n  def bar(x) # TODO: faster\n    x\n  end\nend\n"
    )
    parsed = parse_treesitter("lib/foo.rb", source, "ruby")
    assert parsed is not None
    assert [(u.signature, u.doc) for u in parsed.units[1:]] == [
        ("class Foo", ""),
        ("def bar(x)", "Documents bar"),
    ]


def test_a_spec_file_tests_the_file_it_is_named_for() -> None:
    files = {
        "lib/gem/line_length.rb": "class LineLength\nend\n",
        "lib/gem/other.rb": "class Other\nend\n",
        "spec/gem/line_length_spec.rb": (
            "require 'gem/line_length'\nrequire 'gem/other'\nRSpec.describe LineLength do\nend\n"
        ),
    }
    corpus = _corpus(files)
    spec = corpus.index["spec/gem/line_length_spec.rb"]
    assert corpus.tested_by(spec) == [(corpus.index["lib/gem/line_length.rb"], 1.0)]
