"""C and C++ source as tree-sitter should see it: attribute-like macros blanked out.

Libraries put a macro before nearly every declaration (`FMT_CONSTEXPR20 auto f() -> T`,
`ZSTDLIB_API size_t ZSTD_compress(…)`), open namespaces with one alone on a line
(`FMT_BEGIN_NAMESPACE`), and test features in `#if` lines the preprocessor grammar cannot
read (`#if FMT_HAS_CPP_ATTRIBUTE(clang::lifetimebound)`). Tree-sitter does not expand
macros, so each of these was a syntax error that cost the declaration after it its unit:
37 of fmt's 72 C++ files had errors over 19,284 lines; with these blanked, 31 over 8,527,
and 238 more units (nlohmann/json: 782 more). Also blanked: a macro in a class head
(`class FMT_API format_error`), before a constructor or destructor, as `if`'s `constexpr`
(`if FMT_CONSTEXPR20 (…)`), a template parameter (`FMT_ENABLE_IF(…)>`), and `#if`
conditions continued over lines: fmt's files with errors 33 → 28, 111 more units.

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
# A macro between `class`/`struct` and the name it defines: `class FMT_API format_error {`,
# `struct FMT_SO_VISIBILITY("default") node : base`.
_HEAD_MACRO = rb"(?:" + _MACRO + rb"(?:" + _ARGS + rb")?[ \t]+)"
_CLASS_HEAD = re.compile(
    rb"\b(?:class|struct|union)[ \t]+(" + _HEAD_MACRO + rb"+)"
    rb"(?=[A-Za-z_][A-Za-z0-9_]*[ \t]*(?:final\b)?[ \t]*(?:[:{]|\r?\n))"
)
# `if FMT_CONSTEXPR20 (…)`: a macro standing for `constexpr` (not a directive's `#if X(…)`).
_IF = re.compile(rb"(?<!#)(?<!#[ \t])(?<!#[ \t][ \t])\bif[ \t]+(" + _MACRO + rb")[ \t]*\(")
# A template parameter that is a macro (`template <typename T, FMT_ENABLE_IF(…)>`), with
# its comma; the arguments may span lines.
_TEMPLATE_ARG = re.compile(
    rb",[ \t\r\n]*" + _MACRO + rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)(?=[ \t\r\n]*>)"
)
# The classes a C++ file defines, whose constructors a macro may qualify (a C `struct stat
# *st` parameter defines nothing: `INT_RESULT stat(…)` keeps its type).
_CLASS_NAME = re.compile(
    rb"\b(?:class|struct)[ \t]+" + _HEAD_MACRO + rb"*([A-Za-z_][A-Za-z0-9_]*)"
    rb"(?=[ \t]*(?:final\b)?[ \t]*(?:\r?\n[ \t]*)?[:{])"
)
_DECLARATOR = re.compile(rb"[(;={]")
_NAME = re.compile(rb"[A-Za-z_~][A-Za-z0-9_]*")
# An `#if`/`#elif` condition the preprocessor grammar cannot read (`::`, `<…>`, a string).
_CONDITION = re.compile(rb"^[ \t]*#[ \t]*(?:if|elif)[ \t]+((?:[^\n\\]|\\\r?\n|\\)*)$", re.MULTILINE)
_UNREADABLE = re.compile(rb"::|<|\"")


def masked(src: bytes, *, cpp: bool = False) -> bytes:
    """`src` with attribute-like macros and unreadable `#if` conditions blanked (the
    condition becomes `1`), every byte at its offset; `cpp`: C++, where a macro may qualify
    a constructor."""
    out = bytearray(src)

    def blank(start: int, end: int) -> None:
        out[start:end] = re.sub(rb"[^\r\n]", b" ", src[start:end])

    for m in _ALONE.finditer(src):
        # After `{`, `,` or an operator it is a value (an enum's last enumerator, an
        # expression's last operand), not a macro standing for code; before a `{` it heads
        # a function (`PHP_FUNCTION(strlen)`, `TEST_F(Parser, X)` with the brace below).
        if _last_byte(src, m.start()) not in _CONTINUED and not _opens_next(src, m.end()):
            blank(*m.span())
    classes: set[bytes] | None = None
    for m in _PREFIX.finditer(src):
        # `YY_BUFFER_STATE yy_create_buffer(…)`: a lone name left before the `(` means the
        # macro was the type; `FMT_API void f(…)` leaves a type and a name. A lone name
        # that is a class of the file (or `~` one) is its constructor (destructor).
        line_end = src.find(b"\n", m.end(1))
        rest = _DECLARATOR.split(src[m.end(1) : None if line_end < 0 else line_end], 1)[0]
        names = _NAME.findall(rest)
        if len(names) == 1 and classes is None:
            classes = set(_CLASS_NAME.findall(src)) if cpp else set()
        if len(names) >= 2 or (names and (names[0][:1] == b"~" or names[0] in (classes or ()))):
            blank(*m.span(1))
    for m in _CLASS_HEAD.finditer(src):
        blank(*m.span(1))
    for m in _IF.finditer(src):
        blank(*m.span(1))
    for m in _TEMPLATE_ARG.finditer(src):
        blank(*m.span())
    for m in _CONDITION.finditer(src):
        start, end = m.span(1)
        if _UNREADABLE.search(src, start, end):
            # Continuation lines stay continued: only their backslashes and newlines are kept.
            out[start:end] = re.sub(rb"[^\r\n\\]", b" ", src[start:end])
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
