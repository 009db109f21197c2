"""C and C++ source as tree-sitter should see it: attribute-like macros blanked out.

Libraries put a macro before nearly every declaration (`FMT_CONSTEXPR20 auto f() -> T`,
`ZSTDLIB_API size_t ZSTD_compress(…)`), open namespaces with one alone on a line
(`FMT_BEGIN_NAMESPACE`), and test features in `#if` lines the preprocessor grammar cannot
read (`#if FMT_HAS_CPP_ATTRIBUTE(clang::lifetimebound)`). Tree-sitter does not expand
macros, so each of these was a syntax error that cost the declaration after it its unit:
37 of fmt's 72 C++ files had errors over 19,284 lines; with these blanked, 31 over 8,527,
and 238 more units (nlohmann/json: 782 more).

Only the parse sees the blanks: every byte keeps its offset (lines and columns stay), and
the words a lexical search reads come from the file as written.
"""

from __future__ import annotations

import re

# An upper-case name with an underscore (`FMT_API`, `G_BEGIN_DECLS`): a macro by convention
# (`DWORD` and `NULL` have none and are left alone).
_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*"
_ARGS = rb"\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)"
# A macro alone on its line, with or without arguments and with no `;` after it.
_ALONE = re.compile(rb"^[ \t]*" + _MACRO + rb"(?:" + _ARGS + rb")?[ \t]*$", re.MULTILINE)
_CONTINUED = {bytes([c]) for c in b"{,([=|&+-*%<?^!"}
# Macros between a line's start (or `template<…>`, `static`, `inline`, …) and the
# declaration they qualify.
_PREFIX = re.compile(
    rb"^[ \t]*(?:template[ \t]*<[^\n]*>[ \t]+)?"
    rb"(?:(?:static|inline|extern|constexpr|virtual|explicit|friend)[ \t]+)*"
    rb"((?:" + _MACRO + rb"[ \t]+)+)(?=[A-Za-z_~])",
    re.MULTILINE,
)
_DECLARATOR = re.compile(rb"[(;={]")
_NAME = re.compile(rb"[A-Za-z_~][A-Za-z0-9_]*")
# An `#if`/`#elif` condition the preprocessor grammar cannot read (`::`, `<…>`, a string).
_CONDITION = re.compile(
    rb"^[ \t]*#[ \t]*(?:if|elif)[ \t]+([^\n\\]*(?:::|<|\")[^\n\\]*)$", re.MULTILINE
)


def masked(src: bytes) -> bytes:
    """`src` with attribute-like macros and unreadable `#if` conditions blanked (the
    condition becomes `1`), every byte at its offset."""
    out = bytearray(src)

    def blank(start: int, end: int) -> None:
        out[start:end] = re.sub(rb"[^\r\n]", b" ", src[start:end])

    for m in _ALONE.finditer(src):
        # After `{`, `,` or an operator it is a value (an enum's last enumerator, an
        # expression's last operand), not a macro standing for code; before a `{` it heads
        # a function (`PHP_FUNCTION(strlen)`, `TEST_F(Parser, X)` with the brace below).
        if _last_byte(src, m.start()) not in _CONTINUED and not _opens_next(src, m.end()):
            blank(*m.span())
    for m in _PREFIX.finditer(src):
        # `YY_BUFFER_STATE yy_create_buffer(…)`: a lone name left before the `(` means the
        # macro was the type; `FMT_API void f(…)` leaves a type and a name.
        line_end = src.find(b"\n", m.end(1))
        rest = _DECLARATOR.split(src[m.end(1) : None if line_end < 0 else line_end], 1)[0]
        if len(_NAME.findall(rest)) >= 2:
            blank(*m.span(1))
    for m in _CONDITION.finditer(src):
        start, end = m.span(1)
        blank(start, end)
        out[start] = ord("1")
    return bytes(out)


def _last_byte(src: bytes, end: int) -> bytes:
    """The last byte before `end` that is not whitespace (b"" at the start)."""
    i = end - 1
    while i >= 0 and src[i] in b" \t\r\n":
        i -= 1
    return src[i : i + 1]


def _opens_next(src: bytes, start: int) -> bool:
    """Whether the first byte after `start` that is not whitespace is a `{`."""
    i = start
    while i < len(src) and src[i] in b" \t\r\n":
        i += 1
    return src[i : i + 1] == b"{"
