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
    """Names the statements read but neither the snippet nor Python binds, in order: what
    the reporter had defined or imported off-screen (`x` of a REPL session, `Permutation`)."""
    bound = set(dir(builtins))
    read: dict[str, None] = {}
    for source in (*snippet.prelude, *snippet.statements):
        tree = _parsed(source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    read.setdefault(node.id)
                else:
                    bound.add(node.id)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
    return tuple(name for name in read if name not in bound)


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte
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
        tree = _parsed(source)
        if tree is None or len(tree.body) != 1:
            continue
        node = tree.body[0]
        if isinstance(node, ast.Expr) and isinstance(node.value, _DOING):
            out.append(source)
    return out
