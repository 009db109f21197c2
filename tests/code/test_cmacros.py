"""Attribute-like C and C++ macros blanked before parsing, and what must stay."""

from __future__ import annotations

import pytest

from nexusd.code.cmacros import masked
from nexusd.code.lang_treesitter import parse_treesitter

FMT_LIKE = """\
#if FMT_HAS_CPP_ATTRIBUTE(clang::lifetimebound)
#  define FMT_LIFETIMEBOUND [[clang::lifetimebound]]
#endif
FMT_BEGIN_NAMESPACE
FMT_PRAGMA_GCC(push_options)
namespace detail {
FMT_CONSTEXPR20 inline auto count_digits(uint64_t n) -> int {
  return 1;
}
FMT_API void vprint(string_view fmt, format_args args) {
  return;
}
}  // namespace detail
FMT_END_NAMESPACE
"""


def test_a_header_full_of_macros_parses_into_its_functions() -> None:
    before = parse_treesitter("include/fmt/format.h", FMT_LIKE, "cpp")
    assert before is not None
    got = {(u.kind, u.qualname, u.start, u.end) for u in before.units[1:]}
    assert ("function", "detail.count_digits", 7, 9) in got
    assert ("function", "detail.vprint", 10, 12) in got
    assert before.status == "ok", before.note


@pytest.mark.parametrize(
    "source",
    [
        FMT_LIKE,
        "YY_BUFFER_STATE yy_create_buffer (FILE *file, int size) {\n  return 0;\n}\n",
        "enum kind {\n  KIND_NULL,\n  KIND_LAST\n};\nint flags = FLAG_A |\n  FLAG_B\n;\n",
    ],
    ids=["fmt", "a-macro-type", "values"],
)
def test_every_byte_keeps_its_offset(source: str) -> None:
    src = source.encode()
    out = masked(src)
    assert len(out) == len(src)
    assert [i for i, b in enumerate(out) if b == 10] == [i for i, b in enumerate(src) if b == 10]


def test_a_macro_that_is_a_type_or_a_value_stays() -> None:
    typed = b"YY_BUFFER_STATE yy_create_buffer (FILE *file, int size) {\n  return 0;\n}\n"
    assert masked(typed) == typed  # a lone name before `(`: the macro is the return type
    values = b"enum kind {\n  KIND_NULL,\n  KIND_LAST\n};\nint f = FLAG_A |\n  FLAG_B\n;\n"
    assert masked(values) == values  # an enum's last enumerator, an expression's operand
    parsed = parse_treesitter("src/lexer.c", typed.decode(), "c")
    assert parsed is not None
    assert [u.qualname for u in parsed.units[1:]] == ["yy_create_buffer"]


def test_what_is_blanked_and_how() -> None:
    out = masked(FMT_LIKE.encode()).decode()
    lines = out.split("\n")
    assert lines[0].rstrip() == "#if 1"
    assert lines[1] == "#  define FMT_LIFETIMEBOUND [[clang::lifetimebound]]"  # a definition
    assert lines[3].strip() == "" and lines[4].strip() == ""
    assert lines[6].lstrip() == "inline auto count_digits(uint64_t n) -> int {"
    assert lines[9].lstrip() == "void vprint(string_view fmt, format_args args) {"


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        ("c", "PHP_FUNCTION(strlen)\n{\n  RETURN_LONG(1);\n}\n", ["strlen"]),
        ("cpp", "TEST_F(ParserTest, Reads)\n{\n  EXPECT_TRUE(x);\n}\n", ["TEST_F"]),
    ],
)
def test_a_macro_heading_a_body_on_the_next_line_stays(
    language: str, source: str, expected: list[str]
) -> None:
    assert masked(source.encode()) == source.encode()
    parsed = parse_treesitter("x.c", source, language)
    assert parsed is not None
    assert [u.name for u in parsed.units[1:]] == expected


def test_a_long_file_of_macros_is_read_once() -> None:
    src = b"FMT_BEGIN_NAMESPACE\n" * 50_000  # was quadratic: each match copied all before it
    assert masked(src).strip() == b""


CLASS_LIKE = """\
#if FMT_HAS_INCLUDE(<string_view>) && \\
    FMT_CPLUSPLUS > 201703L
#  include <string_view>
#endif
template <typename To, typename From,
          FMT_ENABLE_IF(sizeof(To) == sizeof(From))>
auto bit_cast(const From& from) -> To { return To(); }
class FMT_SO_VISIBILITY("default") format_error : public std::runtime_error {
 public:
  FMT_CONSTEXPR20 format_error(int code) : std::runtime_error("x") {}
  FMT_CONSTEXPR20 ~format_error() {}
};
void grow(int n) {
  if FMT_CONSTEXPR20 (n > 1) return;
}
"""


def test_macros_in_class_heads_templates_and_conditions_are_blanked() -> None:
    out = masked(CLASS_LIKE.encode(), cpp=True).decode().split("\n")
    assert out[0].split() == ["#if", "1", "\\"]  # continued, still
    assert out[1].strip() == ""
    assert out[5].strip() == ">"  # the macro parameter and its comma
    assert out[7].split() == ["class", "format_error", ":", "public", "std::runtime_error", "{"]
    assert out[9].split()[0] == "format_error(int"  # a constructor: the class's own name
    assert out[10].split()[0] == "~format_error()"
    assert out[13].split()[:2] == ["if", "(n"]
    parsed = parse_treesitter("include/fmt/format.h", CLASS_LIKE, "cpp")
    assert parsed is not None
    assert parsed.status == "ok", parsed.note
    got = {(u.kind, u.qualname) for u in parsed.units[1:]}
    assert {
        ("function", "bit_cast"),
        ("class", "format_error"),
        ("method", "format_error.format_error"),
        ("method", "format_error.~format_error"),
        ("function", "grow"),
    } <= got


@pytest.mark.parametrize(
    "src",
    [
        b"struct MY_POINT {\n  int x;\n};\nstruct MY_POINT origin;\n",  # a struct's own name
        b"#if HAS_FEATURE(3)\nint a;\n#endif\n",  # a directive's readable condition
    ],
)
def test_capitals_that_are_names_or_conditions_stay(src: bytes) -> None:
    assert masked(src) == src
    assert masked(src, cpp=True) == src


def test_a_c_function_named_like_a_struct_keeps_its_type() -> None:
    # Only a class C++ defines has constructors; `struct stat *st` defines nothing.
    src = b"INT_RESULT stat(const char *path, struct stat *st) { return 0; }\n"
    for cpp in (False, True):
        assert masked(src, cpp=cpp) == src
    parsed = parse_treesitter("src/posix.c", src.decode(), "c")
    assert parsed is not None
    assert [u.name for u in parsed.units[1:]] == ["stat"]


def test_a_long_line_of_ifs_is_read_once() -> None:
    line = b"x; if A_B (y) z; " * 20_000  # was quadratic: each `if` scanned back to the line start
    assert masked(line).count(b"A_B") == 0
