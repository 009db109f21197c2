"""The runnable Python a request shows: REPL lines, fenced blocks and inline calls.

A report that says "`sqf_list(...)` gives the wrong factors" carries the code that shows the
fault. Run in the sandbox (`nexusd.sandbox.reproduce`), it says which files of the repository
that code reaches, which no word of the report may say. This module only finds the code; it
never runs it. Imports go to a prelude that is not traced, so a file counts only when the
code the reporter wrote reaches it, not when importing the package does.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass

# A fenced block and its info string (boilerplate.FENCE has no group for the language).
_FENCE = re.compile(
    r"^[ \t>]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t>]*\1[ \t]*$", re.S | re.M
)
_PYTHON = frozenset({"", "python", "py", "python3", "pycon", "ipython", "ipython3", "pytb"})
_PROMPT = re.compile(r"^[ \t]*(?:>[ \t]?)?[ \t]*(?:>>>|In \[\d+\]:)[ \t]?(.*)$")
_MORE = re.compile(r"^[ \t]*(?:>[ \t]?)?[ \t]*(?:\.\.\.|\s+\.\.\.:)[ \t]?(.*)$")
_INLINE = re.compile(r"(?<!`)`([^`\n]{3,200})`(?!`)")
# An inline span runs only when it does something: a call, an operation, an index.
_DOING = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript)
# A command line parses as a subtraction (`pytest --fixtures`, `ls -la`): a word, a space,
# then a flag. Python writes `a - b`, `a ** -b`, not `a -b`.
_COMMAND = re.compile(r"\w\s+--?[A-Za-z]")
MAX_STATEMENTS = 50
MAX_CHARS = 20_000


@dataclass(frozen=True)
class Snippet:
    """A request's code: imports (run untraced) and the statements to trace, in order."""

    prelude: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        """True when there is nothing to run."""
        return not self.statements


def runnable(text: str) -> Snippet:
    """The Python statements `text` shows, each parsed on its own; imports apart."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found = _repl(text) + _blocks(text) + _inline(_FENCE.sub("\n", text))
    prelude: list[str] = []
    statements: list[str] = []
    size = 0
    for source in dict.fromkeys(found):
        tree = _parsed(source)
        if tree is None or not tree.body:
            continue
        size += len(source)
        if size > MAX_CHARS or len(statements) >= MAX_STATEMENTS:
            break
        if all(isinstance(node, ast.Import | ast.ImportFrom) for node in tree.body):
            prelude.append(source)
        else:
            statements.append(source)
    return Snippet(tuple(prelude), tuple(statements))


def free_names(snippet: Snippet) -> tuple[str, ...]:
    """Names the statements read from the top level but neither the snippet nor Python
    binds, in order: what the reporter had defined or imported off-screen (`x` of a REPL
    session, `Permutation`). Scopes count: in `f = lambda x: g(x)`, `x` is bound only inside
    the lambda, and a method reading `y` reads the top level's `y`, not its class's."""
    bound = set(dir(builtins))
    read: dict[str, None] = {}
    for source in (*snippet.prelude, *snippet.statements):
        try:
            table = symtable.symtable(source, "<request>", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for symbol in table.get_symbols():
            if symbol.is_assigned() or symbol.is_imported():
                bound.add(symbol.get_name())
            elif symbol.is_referenced():
                read.setdefault(symbol.get_name())
        stack = list(table.get_children())
        while stack:
            scope = stack.pop(0)
            for symbol in scope.get_symbols():
                if symbol.is_global() and symbol.is_referenced():
                    read.setdefault(symbol.get_name())
            stack.extend(scope.get_children())
    return tuple(name for name in read if name not in bound)


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    # ValueError: a NUL byte; RecursionError: `x+x+…` thousands of terms deep.
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _repl(text: str) -> list[str]:
    """Statements typed at a `>>>` or IPython prompt, with their continuation lines."""
    out: list[str] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        prompt = _PROMPT.match(line)
        more = None if prompt else _MORE.match(line)
        if prompt:
            if current is not None:
                out.append("\n".join(current))
            current = [prompt.group(1)]
        elif more and current is not None:
            current.append(more.group(1))
        elif current is not None:
            out.append("\n".join(current))
            current = None
    if current is not None:
        out.append("\n".join(current))
    return [s for s in out if s.strip()]


def _blocks(text: str) -> list[str]:
    """Top-level statements of fenced blocks that are Python (by label, or unlabelled and
    parsing as Python); blocks with prompts were read as REPL lines."""
    out: list[str] = []
    for match in _FENCE.finditer(text):
        if match.group(2).lower() not in _PYTHON:
            continue
        body = match.group(3)
        if any(_PROMPT.match(line) for line in body.split("\n")):
            continue
        tree = _parsed(body)
        if tree is None:
            continue
        for node in tree.body:
            source = ast.get_source_segment(body, node)
            if source:
                out.append(source)
    return out


def _inline(text: str) -> list[str]:
    """Inline code spans that are one expression doing something (`latex(acsc(x))`)."""
    out: list[str] = []
    for match in _INLINE.finditer(text):
        source = match.group(1).strip()
        if _COMMAND.search(source):
            continue
        tree = _parsed(source)
        if tree is None or len(tree.body) != 1:
            continue
        node = tree.body[0]
        if isinstance(node, ast.Expr) and isinstance(node.value, _DOING):
            out.append(source)
    return out
