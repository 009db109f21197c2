"""Other languages through tree-sitter: units, lines, docs, imports, own text, bad input."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from nexusd.code.definitions import Definitions
from nexusd.code.js_statements import is_test_block
from nexusd.code.lang_treesitter import EXTENSIONS, parse_treesitter
from nexusd.code.ts_walker import MAX_DEPTH
from nexusd.code.units import CodeUnit, ParsedFile

JAVASCRIPT = """\
/**
 * Shapes for the canvas.
 */

import { draw } from "./draw.js";
const path = require("path");

/**
 * A round shape.
 */
class Circle extends Shape {
  area() {
    return Math.PI * this.radius * this.radius;
  }

  scaled = (factor) => {
    return new Circle(this.radius * factor);
  };
}

export function unitCircle() {
  function helper() {
    return 1;
  }
  return new Circle(helper());
}

export const perimeter = (circle) => 2 * Math.PI * circle.radius;
"""

TYPESCRIPT = """\
import type { Shape } from "./shape";

export interface Area {
  area(): number;
  label: string;
}

/** A square. */
export class Square implements Area {
  label = "square";

  @memoize
  area(): number {
    return this.side * this.side;
  }
}

export enum Color {
  Red,
  Green,
}

type Point = { x: number; y: number };

namespace Geometry {
  export function origin(): Point {
    return { x: 0, y: 0 };
  }
}
"""

TSX = """\
import React from "react";

/** The greeting. */
export function Hello({ name }: { name: string }) {
  return <div className="hello">{name}</div>;
}

export class Counter extends React.Component<Props> {
  render() {
    return <span>{this.props.count}</span>;
  }
}
"""

GO = """\
// Package shapes draws shapes.
package shapes

import (
	"fmt"
	m "math"
)

// Circle is round.
type Circle struct {
	Radius float64
}

type (
	Shape interface {
		Area() float64
	}
	ID int
)

// Area is pi r squared.
func (c *Circle) Area() float64 {
	return m.Pi * c.Radius * c.Radius
}

func (c Circle) String() string {
	return fmt.Sprintf("circle %v", c.Radius)
}

func NewCircle(r float64) *Circle {
	return &Circle{Radius: r}
}
"""

RUST = """\
//! Shapes and their areas.

use std::collections::HashMap;
use crate::geometry::{point::Point, Vector as V};

/// A circle.
#[derive(Debug, Clone)]
pub struct Circle {
    radius: f64,
}

pub trait Area {
    fn area(&self) -> f64;
}

impl Circle {
    /// Makes a circle.
    pub fn new(radius: f64) -> Self {
        Circle { radius }
    }
}

impl Area for Circle {
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.radius * self.radius
    }
}

fn main() {
    let shapes: HashMap<u32, Circle> = HashMap::new();
}
"""

JAVA = """\
package com.acme.shapes;

import java.util.List;
import static java.lang.Math.PI;

/**
 * A round shape.
 */
@Entity
public class Circle extends Shape implements Area, Comparable<Circle> {
    private double radius;

    public Circle(double radius) {
        this.radius = radius;
    }

    /** Its area. */
    @Override
    public double area() {
        return PI * radius * radius;
    }

    enum Unit { CM, INCH }
}
"""

C = """\
/* Vectors in the plane. */

#include <math.h>
#include "vec.h"

/* A point in the plane. */
struct vec {
    double x;
    double y;
};

typedef struct {
    struct vec a, b;
} segment_t;

double vec_len(struct vec v);

// The length of v.
double vec_len(struct vec v)
{
    return sqrt(v.x * v.x + v.y * v.y);
}
"""

CPP = """\
#include <vector>
#include "shape.hpp"

namespace geo {

/// A circle.
class Circle : public Shape, private Noncopyable {
public:
    explicit Circle(double r) : r_(r) {}
    double area() const override { return 3.14 * r_ * r_; }
    void draw();

private:
    double r_;
};

template <typename T>
T twice(T x) {
    return x + x;
}

void Circle::draw() {
    render(r_);
}

}  // namespace geo
"""

# (language, path, source, units as (kind, name, qualname, start, end)), file unit first.
UNITS = [
    (
        "javascript",
        "web/shapes.js",
        JAVASCRIPT,
        [
            ("file", "shapes.js", "web.shapes", 1, 28),
            ("class", "Circle", "Circle", 11, 19),
            ("method", "area", "Circle.area", 12, 14),
            ("method", "scaled", "Circle.scaled", 16, 18),
            ("function", "unitCircle", "unitCircle", 21, 26),
            ("function", "helper", "unitCircle.helper", 22, 24),
            ("function", "perimeter", "perimeter", 28, 28),
        ],
    ),
    (
        "typescript",
        "src/square.ts",
        TYPESCRIPT,
        [
            ("file", "square.ts", "src.square", 1, 29),
            ("class", "Area", "Area", 3, 6),
            ("class", "Square", "Square", 9, 16),
            ("method", "area", "Square.area", 12, 15),  # from its decorator
            ("class", "Color", "Color", 18, 21),
            ("class", "Point", "Point", 23, 23),
            ("function", "origin", "Geometry.origin", 26, 28),
        ],
    ),
    (
        "tsx",
        "ui/hello.tsx",
        TSX,
        [
            ("file", "hello.tsx", "ui.hello", 1, 12),
            ("function", "Hello", "Hello", 4, 6),
            ("class", "Counter", "Counter", 8, 12),
            ("method", "render", "Counter.render", 9, 11),
        ],
    ),
    (
        "go",
        "shapes/circle.go",
        GO,
        [
            ("file", "circle.go", "shapes.circle", 1, 32),
            ("class", "Circle", "Circle", 10, 12),
            ("class", "Shape", "Shape", 15, 17),
            ("class", "ID", "ID", 18, 18),
            ("method", "Area", "Circle.Area", 22, 24),
            ("method", "String", "Circle.String", 26, 28),
            ("function", "NewCircle", "NewCircle", 30, 32),
        ],
    ),
    (
        "rust",
        "src/shapes.rs",
        RUST,
        [
            ("file", "shapes.rs", "src.shapes", 1, 31),
            ("class", "Circle", "Circle", 7, 10),  # from its attribute
            ("class", "Area", "Area", 12, 14),
            ("class", "Circle", "Circle", 16, 21),
            ("method", "new", "Circle.new", 18, 20),
            ("class", "Circle", "Circle", 23, 27),
            ("method", "area", "Circle.area", 24, 26),
            ("function", "main", "main", 29, 31),
        ],
    ),
    (
        "java",
        "src/com/acme/shapes/Circle.java",
        JAVA,
        [
            ("file", "Circle.java", "src.com.acme.shapes.Circle", 1, 24),
            ("class", "Circle", "Circle", 9, 24),  # from its annotation
            ("method", "Circle", "Circle.Circle", 13, 15),
            ("method", "area", "Circle.area", 18, 21),
            ("class", "Unit", "Circle.Unit", 23, 23),
        ],
    ),
    (
        "c",
        "lib/vec.c",
        C,
        [
            ("file", "vec.c", "lib.vec", 1, 22),
            ("class", "vec", "vec", 7, 10),
            ("class", "segment_t", "segment_t", 12, 14),
            ("function", "vec_len", "vec_len", 19, 22),
        ],
    ),
    (
        "cpp",
        "src/circle.cpp",
        CPP,
        [
            ("file", "circle.cpp", "src.circle", 1, 26),
            ("class", "Circle", "geo.Circle", 7, 15),
            ("method", "Circle", "geo.Circle.Circle", 9, 9),
            ("method", "area", "geo.Circle.area", 10, 10),
            ("function", "twice", "geo.twice", 17, 20),  # from `template`
            ("method", "draw", "geo.Circle.draw", 22, 24),
        ],
    ),
]

SOURCES = {language: (path, source) for language, path, source, _ in UNITS}


def parse(language: str) -> ParsedFile:
    """The parse of one language's sample, which must succeed without errors."""
    path, source = SOURCES[language]
    parsed = parse_treesitter(path, source, language)
    assert parsed is not None, f"no grammar for {language}"
    assert (parsed.status, parsed.note) == ("ok", "")
    assert parsed.language == language
    return parsed


def units(language: str) -> dict[tuple[str, int], CodeUnit]:
    """Units by (qualname, start): Rust's struct and impls share a qualname."""
    return {(u.qualname, u.start): u for u in parse(language).units}


@pytest.mark.parametrize(
    ("language", "path", "source", "expected"), UNITS, ids=[u[0] for u in UNITS]
)
def test_units_kinds_names_and_lines(
    language: str, path: str, source: str, expected: list[tuple[str, str, str, int, int]]
) -> None:
    parsed = parse_treesitter(path, source, language)
    assert parsed is not None
    assert parsed.status == "ok"
    got = [(u.kind, u.name, u.qualname, u.start, u.end) for u in parsed.units]
    assert got == expected
    assert all(u.path == path for u in parsed.units)


@pytest.mark.parametrize(
    ("language", "path", "source", "expected"),
    [
        (
            "rust",
            "src/macros/select.rs",
            "/// Waits on branches.\n#[macro_export]\nmacro_rules! select {\n"
            "    (else => $e:expr) => { $e };\n}\n",
            [
                ("file", "select.rs", "src.macros.select", 1, 5),
                ("function", "select", "select", 2, 5),
            ],
        ),
        (
            "c",
            "src/jv.h",
            "#define JV_IS_VALID(x) ((x).kind != 0)\n#define LIMIT 10\n"
            "int f(int a) { return a; }\n",
            [
                ("file", "jv.h", "src.jv", 1, 3),
                ("function", "JV_IS_VALID", "JV_IS_VALID", 1, 1),
                ("function", "f", "f", 3, 3),
            ],
        ),
    ],
    ids=["rust-macro_rules", "c-function-like-macro"],
)
def test_macros_that_take_arguments_are_units(
    language: str, path: str, source: str, expected: list[tuple[str, str, str, int, int]]
) -> None:
    parsed = parse_treesitter(path, source, language)
    assert parsed is not None
    assert [(u.kind, u.name, u.qualname, u.start, u.end) for u in parsed.units] == expected


def test_functions_assigned_to_an_objects_property_are_units() -> None:
    source = (
        "function Layer(fn) {\n  this.handle = fn;\n}\n\n"
        "/** Handle the request. */\n"
        "Layer.prototype.handle_request = function handle(req, res) {\n  return 1;\n};\n\n"
        "res.send = function send(body) {\n  return this;\n};\n"
        "module.exports.parse = function (s) { return s; };\n"
        "total = 1 + 2;\n"
        "function Runner() {\n  this.run = function () {};\n  function helper() {}\n}\n"
    )
    parsed = parse_treesitter("lib/router/layer.js", source, "javascript")
    assert parsed is not None
    got = [(u.kind, u.qualname, u.start, u.end) for u in parsed.units[1:]]
    assert got == [
        ("function", "Layer", 1, 3),
        ("method", "Layer.handle_request", 6, 8),
        ("method", "res.send", 10, 12),
        ("function", "parse", 13, 13),  # the module's own
        ("function", "Runner", 15, 18),
        ("method", "Runner.run", 16, 16),  # an ES5 constructor's method
        ("function", "Runner.helper", 17, 17),  # a closure
    ]
    assert parsed.units[2].doc == "Handle the request."
    # Methods set on a function of the file define their names; its closures do not.
    defined = Definitions(parsed.units, [range(len(parsed.units))]).exact
    assert {"handle_request", "run", "send", "parse"} <= defined.keys()
    assert "helper" not in defined


@pytest.mark.parametrize(
    ("language", "path", "source", "expected"),
    [
        (
            "javascript",
            "src/plugin/week/index.js",
            "export default (o, c, d) => {\n  const proto = c.prototype\n"
            "  proto.week = function (week = null) {\n    this.tick = function () {}\n"
            "    return 1\n  }\n  d.utc = (date) => date\n  proto.n = 2\n}\n",
            [
                ("function", "default", 1, 9),
                ("method", "default.proto.week", 3, 6),
                ("method", "default.proto.week.tick", 4, 4),  # `this.`: the method's own
                ("method", "default.d.utc", 7, 7),
            ],
        ),
        (
            "typescript",
            "src/layer.ts",
            "Layer.prototype.handle = function (req: Request): number {\n  return 1\n}\n"
            "export function install(proto: P): void {\n  proto.week = function () {}\n}\n",
            [
                ("method", "Layer.handle", 1, 3),
                ("function", "install", 4, 6),
                ("method", "install.proto.week", 5, 5),
            ],
        ),
    ],
    ids=["javascript-in-a-function", "typescript"],
)
def test_functions_assigned_inside_functions_and_in_typescript_are_units(
    language: str, path: str, source: str, expected: list[tuple[str, str, int, int]]
) -> None:
    parsed = parse_treesitter(path, source, language)
    assert parsed is not None
    assert [(u.kind, u.qualname, u.start, u.end) for u in parsed.units[1:]] == expected


@pytest.mark.parametrize("language", ["javascript", "typescript", "tsx"])
def test_a_function_a_call_wraps_is_the_declared_names_unit(language: str) -> None:
    source = (
        "export const Button = React.forwardRef((props, ref) => {\n  return null\n})\n"
        "const Memo = memo(forwardRef(function Inner(p, r) {\n  return p\n}))\n"
        'export const $ZodString = /*@__PURE__*/ core.$constructor("$ZodString", (inst, def) => {\n'
        "  init(inst, def)\n})\n"
        "const app = express()\n"
        "const ids = rows.map((r) => r.id)\n"
        "const handle = debounce(save, 100)\n"
        "const Widget = class extends Base {\n  run() {}\n}\n"
    )
    parsed = parse_treesitter("src/ui.js", source, language)
    assert parsed is not None
    # A call's value is no unit unless it wraps one function with a body: not `express()`,
    # not `rows.map(r => r.id)`, not a function passed by name.
    assert [(u.kind, u.name, u.start, u.end) for u in parsed.units[1:]] == [
        ("function", "Button", 1, 3),
        ("function", "Memo", 4, 6),
        ("function", "$ZodString", 7, 9),
        ("class", "Widget", 13, 15),
        ("method", "run", 14, 14),
    ]


TEST_FILE = (
    "import dayjs from '../src'\n\n"
    "describe('Format', () => {\n"
    "  it('pads the year to   four digits', () => {\n"
    "    expect(dayjs('0099-01-01').format('YYYY')).toBe('0099')\n"
    "  })\n"
    "  it.only('reads a.b', function () {\n    const x = 1\n  })\n"
    "  test.each([1, 2])('case %s', (n) => {})\n"
    "})\n\n"
    "test('format', async () => { await 1 })\n"
    "beforeEach(() => { MockDate.set(new Date()) })\n"
    "describe(title, () => {})\n"
)


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_test_blocks_are_units_named_by_their_titles(language: str) -> None:
    parsed = parse_treesitter("test/display.test.js", TEST_FILE, language)
    assert parsed is not None
    got = [(u.kind, u.qualname, u.start, u.end) for u in parsed.units[1:]]
    assert got == [
        ("function", 'describe("Format")', 3, 11),
        ("function", 'describe("Format").it("pads the year to four digits")', 4, 6),
        ("function", 'describe("Format").it("reads a b")', 7, 9),  # no dot: a qualname's
        ("function", 'test("format")', 13, 13),
    ]
    assert parsed.units[2].signature == "it('pads the year to four digits', () =>"
    assert "YYYY" in parsed.units[2].text
    # A title is no name: `format` stays the library's, not the test's.
    assert parsed.file_unit.defines == ()
    defined = Definitions(parsed.units, [range(len(parsed.units))]).lower
    assert "format" not in defined


@pytest.mark.parametrize(
    "call",
    [
        "context.app.get('/orders', function listOrders(req, res) {})",
        "suite.runner.on('end', () => {})",
        "test.each([1, 2])('case %s', (n) => {})",
        "it(title, () => {})",
        "describe('no callback', options)",
    ],
)
def test_calls_that_are_no_test_block(call: str) -> None:
    parsed = parse_treesitter("src/server.js", call + "\n", "javascript")
    assert parsed is not None
    assert [u.qualname for u in parsed.units[1:] if "(" in u.qualname] == []


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ("test.describe('suite', () => {})", 'describe("suite")'),  # Playwright
        ("test.concurrent.only('runs', async () => {})", 'test("runs")'),
        ("it('...', () => {})", 'it("…")'),
        ("it('a. b', () => {})", 'it("a b")'),
        ("it(`pads ${n}`, function* () {})", 'it("pads ${n}")'),
    ],
)
def test_a_test_blocks_name(call: str, name: str) -> None:
    parsed = parse_treesitter("e2e/a.spec.ts", call + "\n", "typescript")
    assert parsed is not None
    assert [u.qualname for u in parsed.units[1:]] == [name]
    assert is_test_block(name)


def test_extensions_cover_every_language() -> None:
    assert EXTENSIONS == {
        ".js": "javascript",
        ".mjs": "javascript",
        ".cjs": "javascript",
        ".jsx": "javascript",
        ".ts": "typescript",
        ".mts": "typescript",
        ".cts": "typescript",
        ".tsx": "tsx",
        ".go": "go",
        ".rs": "rust",
        ".java": "java",
        ".c": "c",
        ".h": "c",
        ".cc": "cpp",
        ".cpp": "cpp",
        ".cxx": "cpp",
        ".hpp": "cpp",
        ".hh": "cpp",
        ".hxx": "cpp",
        ".ipp": "cpp",
        ".inl": "cpp",
        ".tcc": "cpp",
        ".php": "php",
        ".rb": "ruby",
        ".rake": "ruby",
        ".gemspec": "ruby",
        ".ru": "ruby",
    }


IMPORTS = [
    ("javascript", ("./draw.js", "path")),
    ("typescript", ("./shape",)),
    ("tsx", ("react",)),
    ("go", ("fmt", "math")),
    (
        "rust",
        ("std::collections::HashMap", "crate::geometry::point::Point", "crate::geometry::Vector"),
    ),
    ("java", ("java.util.List", "java.lang.Math.PI")),
    ("c", ("math.h", "vec.h")),
    ("cpp", ("vector", "shape.hpp")),
]


@pytest.mark.parametrize(("language", "expected"), IMPORTS, ids=[i[0] for i in IMPORTS])
def test_imports_on_the_file_unit(language: str, expected: tuple[str, ...]) -> None:
    parsed = parse(language)
    assert parsed.file_unit.imports == expected
    assert all(not u.imports for u in parsed.units[1:])


def test_require_and_dynamic_import_and_reexport() -> None:
    source = 'const a = require("./a");\nimport("./lazy");\nexport { b } from "./b";\nfoo("x");\n'
    parsed = parse_treesitter("m.mjs", source, "javascript")
    assert parsed is not None
    assert parsed.file_unit.imports == ("./a", "./lazy", "./b")


DOCS = [
    ("javascript", ("Circle", 11), "A round shape."),
    ("typescript", ("Square", 9), "A square."),
    ("tsx", ("Hello", 4), "The greeting."),
    ("go", ("Circle", 10), "Circle is round."),
    ("go", ("Circle.Area", 22), "Area is pi r squared."),
    ("rust", ("Circle", 7), "A circle."),
    ("rust", ("Circle.new", 18), "Makes a circle."),
    ("java", ("Circle", 9), "A round shape."),
    ("java", ("Circle.area", 18), "Its area."),
    ("c", ("vec", 7), "A point in the plane."),
    ("c", ("vec_len", 19), "The length of v."),
    ("cpp", ("geo.Circle", 7), "A circle."),
]


@pytest.mark.parametrize(("language", "key", "doc"), DOCS, ids=[f"{d[0]}-{d[1][0]}" for d in DOCS])
def test_doc_comment_above_a_declaration(language: str, key: tuple[str, int], doc: str) -> None:
    assert units(language)[key].doc == doc


FILE_DOCS = [
    ("javascript", "Shapes for the canvas."),
    ("typescript", ""),
    ("go", "Package shapes draws shapes."),
    ("rust", "Shapes and their areas."),
    ("java", ""),
    ("c", "Vectors in the plane."),
    ("cpp", ""),
]


@pytest.mark.parametrize(("language", "doc"), FILE_DOCS, ids=[d[0] for d in FILE_DOCS])
def test_file_doc_is_the_leading_comment(language: str, doc: str) -> None:
    assert parse(language).file_unit.doc == doc


TRAILING = [
    ("javascript", "const a = 1; // the answer\nfunction f() {}\n"),
    ("cpp", "namespace a {\nint x;\n}  // namespace a\nvoid f() {}\n"),
    ("go", "package p\n\nvar a = 1 // the answer\nfunc f() {}\n"),
]


@pytest.mark.parametrize(("language", "source"), TRAILING, ids=[t[0] for t in TRAILING])
def test_trailing_comment_is_not_the_next_doc(language: str, source: str) -> None:
    parsed = parse_treesitter("t.x", source, language)
    assert parsed is not None
    f = parsed.units[-1]
    assert (f.qualname, f.start, f.doc) == ("f", source.count("\n"), "")
    assert any("//" in line for line in parsed.file_unit.text.split("\n"))


def test_undocumented_units_have_no_doc() -> None:
    got = {u.qualname: u.doc for u in parse("javascript").units[1:]}
    assert got["Circle.area"] == ""
    assert got["unitCircle"] == ""


SIGNATURES = [
    ("javascript", ("Circle", 11), "class Circle extends Shape"),
    ("javascript", ("Circle.scaled", 16), "scaled = (factor) =>"),
    ("javascript", ("perimeter", 28), "export const perimeter = (circle) =>"),
    ("typescript", ("Square", 9), "export class Square implements Area"),
    ("typescript", ("Square.area", 12), "area(): number"),
    ("go", ("Circle", 10), "type Circle struct"),
    ("go", ("Shape", 15), "Shape interface"),
    ("go", ("Circle.Area", 22), "func (c *Circle) Area() float64"),
    ("rust", ("Circle", 16), "impl Circle"),
    ("rust", ("Circle", 23), "impl Area for Circle"),
    ("rust", ("Circle.new", 18), "pub fn new(radius: f64) -> Self"),
    (
        "java",
        ("Circle", 9),
        "@Entity public class Circle extends Shape implements Area, Comparable<Circle>",
    ),
    ("c", ("vec_len", 19), "double vec_len(struct vec v)"),
    ("cpp", ("geo.Circle.Circle", 9), "explicit Circle(double r) : r_(r)"),
    ("cpp", ("geo.twice", 17), "template <typename T> T twice(T x)"),
]


@pytest.mark.parametrize(
    ("language", "key", "signature"), SIGNATURES, ids=[f"{s[0]}-{s[1][0]}" for s in SIGNATURES]
)
def test_signature_is_the_header_on_one_line(
    language: str, key: tuple[str, int], signature: str
) -> None:
    assert units(language)[key].signature == signature


BASES = [
    ("javascript", ("Circle", 11), ("Shape",)),
    ("typescript", ("Square", 9), ("Area",)),
    ("tsx", ("Counter", 8), ("React.Component",)),
    ("rust", ("Circle", 23), ("Area",)),
    ("rust", ("Circle", 16), ()),
    ("java", ("Circle", 9), ("Shape", "Area", "Comparable<Circle>")),
    ("cpp", ("geo.Circle", 7), ("Shape", "Noncopyable")),
]


@pytest.mark.parametrize(
    ("language", "key", "bases"), BASES, ids=[f"{b[0]}-{b[1][1]}" for b in BASES]
)
def test_bases_as_written(language: str, key: tuple[str, int], bases: tuple[str, ...]) -> None:
    assert units(language)[key].bases == bases


DEFINES = [
    ("javascript", ("", 1), ("path", "Circle", "unitCircle", "perimeter")),
    ("javascript", ("Circle", 11), ("Circle", "area", "scaled")),
    ("javascript", ("unitCircle", 21), ("unitCircle", "helper")),
    ("typescript", ("Area", 3), ("Area", "area", "label")),
    ("typescript", ("Color", 18), ("Color", "Red", "Green")),
    ("go", ("", 1), ("Circle", "Shape", "ID", "NewCircle")),
    ("go", ("Circle", 10), ("Circle", "Radius", "Area", "String")),  # receivers' methods too
    ("rust", ("Circle", 7), ("Circle", "radius")),
    ("rust", ("Circle", 16), ("Circle", "new")),
    ("rust", ("Area", 12), ("Area", "area")),
    ("java", ("Circle", 9), ("Circle", "radius", "area", "Unit")),
    ("java", ("Circle.Unit", 23), ("Unit", "CM", "INCH")),
    ("c", ("", 1), ("vec", "segment_t", "vec_len")),
    ("c", ("vec", 7), ("vec", "x", "y")),
    ("cpp", ("geo.Circle", 7), ("Circle", "area", "draw", "r_")),
]


@pytest.mark.parametrize(
    ("language", "key", "defines"), DEFINES, ids=[f"{d[0]}-{d[1][0] or 'file'}" for d in DEFINES]
)
def test_defines_own_name_and_direct_members(
    language: str, key: tuple[str, int], defines: tuple[str, ...]
) -> None:
    unit = parse(language).file_unit if key[0] == "" else units(language)[key]
    assert unit.defines == defines


def test_uses_are_the_identifiers_of_the_own_body() -> None:
    got = {(u.qualname, u.start): u.uses for u in parse("go").units}
    assert got[("Circle.Area", 22)] == ("c", "Circle", "float64", "m", "Pi", "Radius")
    assert got[("NewCircle", 30)] == ("r", "float64", "Circle", "Radius")
    js = {u.qualname: u.uses for u in parse("javascript").units}
    # `helper` is its own unit: its body's words are not the outer function's
    assert js["unitCircle.helper"] == ()
    assert js["unitCircle"] == ("Circle", "helper")
    assert js["Circle"] == ("Shape",)


@pytest.mark.parametrize("language", list(SOURCES))
def test_every_line_is_in_exactly_one_units_text(language: str) -> None:
    parsed = parse(language)
    source = SOURCES[language][1]
    own = Counter(line for u in parsed.units for line in u.text.split("\n") if line.strip())
    assert own == Counter(line for line in source.split("\n") if line.strip())


def test_own_text_leaves_out_members_bodies() -> None:
    js = {u.qualname: u for u in parse("javascript").units}
    assert "Math.PI" not in js["Circle"].text
    assert "return Math.PI * this.radius * this.radius;" in js["Circle.area"].text
    assert js["Circle"].text.startswith("/**\n * A round shape.\n */\nclass Circle extends Shape {")
    file_text = parse("javascript").file_unit.text
    assert "unitCircle" not in file_text
    assert 'const path = require("path");' in file_text
    cpp = {(u.qualname, u.start): u for u in parse("cpp").units}
    assert "3.14" not in cpp[("geo.Circle", 7)].text
    assert "double r_;" in cpp[("geo.Circle", 7)].text
    rust = {(u.qualname, u.start): u for u in parse("rust").units}
    assert "PI" not in rust[("Circle", 23)].text
    assert rust[("Circle.area", 24)].text.strip().startswith("fn area(&self) -> f64 {")


def test_syntax_error_keeps_the_units() -> None:
    source = (
        "function ok() {\n  return 1;\n}\n\n"
        "function broken( {\n  let x = ;\n}\n\n"
        "class Later {\n  m() {}\n}\n"
    )
    parsed = parse_treesitter("bad.js", source, "javascript")
    assert parsed is not None
    assert parsed.status == "syntax-error"
    assert parsed.note == "line 5: syntax error"
    got = [(u.kind, u.qualname, u.start, u.end) for u in parsed.units]
    assert got == [
        ("file", "bad", 1, 11),
        ("function", "ok", 1, 3),
        ("class", "Later", 9, 11),
        ("method", "Later.m", 10, 10),
    ]


MISSING = [
    ("go", "p/bad.go", "package p\n\nfunc ok() int { return 1 }\n\nfunc broken( {\n}\n", 5, ")"),
    ("c", "bad.c", "int ok(void) { return 1; }\nint f(void) {\n  return 1\n}\n", 3, ";"),
    ("rust", "bad.rs", "fn ok() {}\nfn f() {\n  let x = 1\n}\n", 3, ";"),
]


@pytest.mark.parametrize(("language", "path", "source", "line", "token"), MISSING)
def test_missing_token_is_named_in_the_note(
    language: str, path: str, source: str, line: int, token: str
) -> None:
    parsed = parse_treesitter(path, source, language)
    assert parsed is not None
    assert (parsed.status, parsed.note) == ("syntax-error", f"line {line}: missing {token}")
    assert [u.kind for u in parsed.units] == ["file", "function", "function"]


@pytest.mark.parametrize("language", sorted(set(EXTENSIONS.values())))
def test_empty_file_is_one_file_unit(language: str) -> None:
    parsed = parse_treesitter("pkg/empty.x", "", language)
    assert parsed is not None
    assert parsed.status == "ok"
    assert len(parsed.units) == 1
    unit = parsed.file_unit
    assert (unit.kind, unit.name, unit.qualname, unit.start, unit.end) == (
        "file",
        "empty.x",
        "pkg.empty",
        1,
        1,
    )
    assert (unit.text, unit.defines, unit.imports, unit.doc) == ("", (), (), "")


def test_unknown_language_gives_none() -> None:
    assert parse_treesitter("a.cob", "IDENTIFICATION DIVISION.", "cobol") is None


def test_deep_nesting_neither_overflows_nor_explodes() -> None:
    depth = 3000
    source = "".join(f"function f{i}() {{\n" for i in range(depth)) + "}\n" * depth
    started = time.perf_counter()
    parsed = parse_treesitter("deep.js", source, "javascript")
    elapsed = time.perf_counter() - started
    assert parsed is not None
    assert parsed.status == "ok"
    assert len(parsed.units) == 1 + MAX_DEPTH
    deepest = parsed.units[-1]
    assert deepest.qualname == ".".join(f"f{i}" for i in range(MAX_DEPTH))
    assert (deepest.start, deepest.end) == (MAX_DEPTH, 2 * depth - MAX_DEPTH + 1)
    assert elapsed < 5


def test_large_file_is_fast() -> None:
    block = JAVASCRIPT.split("\n", 7)[7]  # from the class on, without the imports
    source = "\n".join(block.replace("Circle", f"Circle{i}") for i in range(230))
    assert source.count("\n") >= 5000
    parse_treesitter("big.js", source, "javascript")  # loads the grammar
    started = time.process_time()
    parsed = parse_treesitter("big.js", source, "javascript")
    elapsed = time.process_time() - started
    assert parsed is not None
    assert len(parsed.units) == 1 + 230 * 6
    assert elapsed < 1.0  # well under 0.1 s on an idle machine; the bound catches blowups


def test_threads_each_parse_alike() -> None:
    languages = [language for language, *_ in UNITS] * 4
    serial = [parse(language) for language in languages]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(parse, languages))
    assert threaded == serial
