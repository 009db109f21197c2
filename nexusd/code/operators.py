"""The operations a request's code performs, as words: `(-a)**x * a**(-x)` → power, product.

Code says what it does through operators as much as through names. A report whose snippet
raises something to a power is about the code that implements the power (`__pow__`, `Pow`,
`_eval_power`, `impl Pow`, `power()`), which may share no name with the snippet. Each
binary operator found between two operands gives the words such code is named with; the
miner adds them as it adds the snippet's names (`query.mine`).

Only what reads as arithmetic counts: an operator between operands spaced alike on both
sides (`a*b`, `a * b`; not a C pointer `char *p`), paths and URLs left out (`src/mod.py`),
and a slash between two words is prose (`and/or`, `read/write`), not a division.
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
# Whole tokens that are paths or URLs: their slashes divide nothing.
_PATH_TOKEN = re.compile(
    r"(?<!\S)(?:\w+://\S+|[.~/][\w.~/-]*/[\w.~/-]*|[\w.~-]*/[\w.~/-]*\.[A-Za-z]\w*"
    r"|[\w.~-]+(?:/[\w.~-]+){2,})(?!\S)"
)
_WORD = re.compile(r"[A-Za-z]{2,}")
_SPAN = 80  # characters read either side of a slash for the words it joins


def operator_words(code: str) -> set[str]:
    """The words of the arithmetic operators `code` applies between operands."""
    code = _PATH_TOKEN.sub(" ", code)
    found: set[str] = set()
    for m in _OPERATOR.finditer(code):
        op = m.group("op")
        if WORDS[op][0] in found:
            continue  # known already: the rest of a long snippet costs little
        after = code[m.end() : m.end() + 1]
        if bool(m.group("before")) != bool(m.group("after")):
            continue  # `char *p`, `Foo* bar`: a declaration, not a product
        if after == "-" and op != "**":
            continue  # `x**-1` is a power; `a/-b` is rare, `ls /-x`, `%-5s` are not sums
        if op != "**" and code[m.end("op") : m.end("op") + 1] in ("=", op):
            continue  # `*=`, `//`: an augmented assignment, a floor division
        if op == "/" and _prose_alternative(code, m.start(), m.end()):
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
