"""The operations a request's code performs, as words: `(-a)**x * a**(-x)` → power, product.

Code says what it does through operators as much as through names. A report whose snippet
raises something to a power is about the code that implements the power (`__pow__`, `Pow`,
`_eval_power`, `impl Pow`, `power()`), which may share no name with the snippet. Each
binary operator found between two operands gives the words such code is named with; the
miner adds them as it adds the snippet's names (`query.mine`).

Only what reads as arithmetic counts: an operator between operands spaced alike on both
sides (`a*b`, `a * b`; not a C pointer `char *p`), paths and URLs left out (`src/mod.py`,
`File "/usr/lib/python3.8/x.py"`), and a slash between two words is prose (`and/or`,
`read/write`), not a division. A title is prose: its slash divides only inside an
expression (`(-x/4 - S(1)/12)**x`), not in `Python 3.8/3.9` or `I/O`.
"""

from __future__ import annotations

import re

# Operator → the words the code implementing it is named with (split as identifiers are:
# `__pow__` → pow, `_eval_power` → eval, power; `Mul` → mul).
WORDS = {"**": ("pow", "power"), "*": ("mul",), "/": ("div",), "%": ("mod",)}
# An operator between an operand's end and the next operand's start (`**` tried before
# `*`); the operands are looked at, not consumed, so `a*b*c` counts both.
_OPERATOR = re.compile(
    r"(?<=[\w)\]])(?P<before>[ \t]*)(?P<op>\*\*|\*|/|%)(?P<after>[ \t]*)(?=[\w(\[-])"
)
# A file's extension: `a/np.pi`, `x/self.scale` divide; `a/__init__.py` names a file.
_EXT = (
    r"(?:pyi?|pyx|rs|go|[ch]|cc|cpp|cxx|hh|hpp|java|kt|scala|m?js|cjs|jsx|tsx?|vue|rb|php|cs"
    r"|swift|sh|md|rst|txt|json|toml|ya?ml|cfg|ini|html?|css|xml|lock|log|so|dll|a)"
)
# Whole tokens that are paths or URLs: their slashes divide nothing. A quote, a bracket or
# a `:line` ends one as a space does (`File "/home/u/lib/python3.8/x.py", line 2`,
# `(/home/u/p/index.js:10:5)`, `#include <fmt/core.h>`, `WindowsPath('C:/Users/me')`).
_PATH_TOKEN = re.compile(
    r"(?<![^\s\"'`(\[<=,;:])"
    r"(?:\w+://\S+|[.~/][\w.~/@+-]*/[\w.~/@+-]*"
    rf"|[\w.~@+-]*/[\w.~/@+-]*\.{_EXT}"
    r"|[\w.~@+-]+(?:/[\w.~@+-]+){2,})"
    r"(?=[\s\"'`)\]>,;:]|$)"
)
_WORD = re.compile(r"[A-Za-z]{2,}")
# Percent-encoding (`%20world`, `a%2Fb`, `.css%00.js`): no modulo.
_PERCENT_ENCODED = re.compile(r"%[0-9][0-9A-Fa-f](?:[A-Za-z%.]|(?<=[A-Fa-f]))")
_SPAN = 80  # characters read either side of a slash for the words it joins


def operator_words(code: str, *, prose: bool = False) -> set[str]:
    """The words of the arithmetic operators `code` applies between operands; with `prose`
    (a title), a slash counts only within an expression (a token with a bracket or another
    operator: `S(1)/12`, `x**(1/E)`), not between versions or initials (`3.8/3.9`, `I/O`)."""
    code = _PATH_TOKEN.sub(" ", code)
    found: set[str] = set()
    for m in _OPERATOR.finditer(code):
        op = m.group("op")
        if WORDS[op][0] in found:
            continue  # known already: the rest of a long snippet costs little
        if bool(m.group("before")) != bool(m.group("after")):
            continue  # `char *p`, `Foo* bar`: a declaration, not a product
        if code[m.end() : m.end() + 1] == "-" and op != "**" and not m.group("after"):
            continue  # `%-5s`, `*-linux-*`; a spaced `x * -1` is a product
        if op == "%" and _PERCENT_ENCODED.match(code, m.start("op")):
            continue
        if op == "/" and _prose_alternative(code, m.start(), m.end()):
            continue
        if op == "/" and prose and not _in_expression(code, m.start("op")):
            continue
        found.update(WORDS[op])
    return found


def _prose_alternative(code: str, start: int, end: int) -> bool:
    """`and/or`, `sympify/simplify`: two words joined by a slash, not a quotient."""
    # Only a short stretch either side is read: a huge snippet of slashes stays linear.
    left = re.search(r"\w+$", code[max(start - _SPAN, 0) : start])
    right = re.match(r"\w+", code[end : end + _SPAN])
    return bool(
        left and right and _WORD.fullmatch(left.group(0)) and _WORD.fullmatch(right.group(0))
    )


def _in_expression(text: str, at: int) -> bool:
    """Whether the slash at `at` of a title is inside an expression: its stretch of text
    (up to a space) holds a bracket, a backtick or another operator (`S(1)/12)**x`)."""
    lo = max(text.rfind(" ", max(at - _SPAN, 0), at), at - _SPAN, 0)
    hi = text.find(" ", at, at + _SPAN)
    token = text[lo : hi if hi != -1 else at + _SPAN]
    return any(c in token for c in "()[]*%`")
