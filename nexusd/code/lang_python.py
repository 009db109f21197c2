"""Python files through `ast`: modules, classes, functions and methods with what each uses.

Each unit's `text` holds only its own lines (a class without its methods' bodies, a module
without its functions), so the file's words are the sum of its units' and nothing counts
twice. A file that does not parse falls back to line windows and says why.
"""

from __future__ import annotations

import ast
import keyword
import re
import warnings
from collections.abc import Iterator

from nexusd.code.lines import line_windows, own_text
from nexusd.code.tokens import IDENT
from nexusd.code.units import (
    MAX_DOC_CHARS,
    MAX_SIGNATURE_CHARS,
    CodeUnit,
    ParsedFile,
    UnitKind,
    clip,
    module_name,
    text_lines,
)

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_KEYWORDS = frozenset(keyword.kwlist) | {"self", "cls"}


def _uses(text: str) -> tuple[str, ...]:
    """Identifiers in a unit's own text, keywords aside: what it references.

    Read from the text, not the tree: a tree walk per unit cost a third of the parse time,
    and a name in a string or comment is still a reference worth following.
    """
    return tuple(w for w in dict.fromkeys(IDENT.findall(text)) if w not in _KEYWORDS)


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement of a body, nested blocks and defs included (not expressions)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(reversed([c for c in children if isinstance(c, ast.AST)]))


def _imports(tree: ast.Module, package: str) -> tuple[str, ...]:
    """Modules imported anywhere in the file; `from . import x` resolved against `package`."""
    out: dict[str, None] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.setdefault(alias.name, None)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                keep = parts[: max(len(parts) - (node.level - 1), 0)]
                base = ".".join([*keep, base] if base else keep)
            if not base:
                continue
            out.setdefault(base, None)
            for alias in node.names:
                if alias.name != "*":
                    # `from a.b import c` may import the module `a.b.c` or the name `c` of `a.b`.
                    out.setdefault(f"{base}.{alias.name}", None)
    return tuple(out)


def _stored_names(nodes: list[ast.stmt]) -> list[str]:
    """Names module-level statements bind (`X = …`, `X: int = …`, `for X in …`), also inside
    the module's `if`, `try` and `with` blocks (`if QT6: QT_API = …`)."""
    out = []
    for node in nodes:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For):
            targets = [node.target]
        elif isinstance(node, ast.If | ast.Try | ast.With):
            out += [name for block in _blocks(node) for name in _stored_names(block)]
        for target in targets:
            out += _bound(target)
    return out


def _bound(target: ast.expr) -> list[str]:
    """The names an assignment target binds: `A` and `B` of `A, *B = …`, none of
    `REGISTRY[KEY] = …` or `CONFIG.VALUE = …` (those read `KEY` and `CONFIG`)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _bound(element)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


# A comment after the header's colon (`class Config(dict):  # type: ignore`) is not the
# signature.
_HEADER_COMMENT = re.compile(r":\s*#.*$")


def _signature(node: _Def, lines: list[str]) -> str:
    first = node.lineno - 1
    if isinstance(node, ast.ClassDef):
        header = lines[first] if first < len(lines) else f"class {node.name}"
        header = _HEADER_COMMENT.sub(":", header.strip())
        return clip(header.rstrip(":"), MAX_SIGNATURE_CHARS)
    body_line = node.body[0].lineno - 1 if node.body else first + 1
    header = " ".join(s.strip() for s in lines[first : max(body_line, first + 1)])
    header = _HEADER_COMMENT.sub(":", header)
    header = header.split("):")[0] + ")" if "):" in header else header.rstrip(":")
    return clip(header, MAX_SIGNATURE_CHARS)


class _Builder:
    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.units: list[CodeUnit] = []

    def visit(self, body: list[ast.stmt], prefix: str, in_class: bool) -> list[tuple[int, int]]:
        """Add a unit per def/class in `body`; return their line ranges."""
        spans = []
        for node in body:
            if isinstance(node, _Def):
                spans.append(self.unit(node, prefix, in_class))
            elif isinstance(node, ast.If | ast.Try | ast.With):
                # `if TYPE_CHECKING:` / `try: import …` blocks hold real definitions too.
                for block in _blocks(node):
                    spans.extend(self.visit(block, prefix, in_class))
        return spans

    def unit(self, node: _Def, prefix: str, in_class: bool) -> tuple[int, int]:
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        qual = f"{prefix}.{node.name}" if prefix else node.name
        index = len(self.units)
        self.units.append(CodeUnit(self.path, "function", node.name, qual, start, end))
        holes = self.visit(node.body, qual, isinstance(node, ast.ClassDef))
        members = [n.name for n in _direct_defs(node.body)]
        text = own_text(self.lines, start, end, holes)
        kind: UnitKind
        if isinstance(node, ast.ClassDef):
            kind = "class"
            bases = tuple(ast.unparse(b) for b in node.bases)
        else:
            kind = "method" if in_class else "function"
            bases = ()
        self.units[index] = CodeUnit(
            path=self.path,
            kind=kind,
            name=node.name,
            qualname=qual,
            start=start,
            end=end,
            signature=_signature(node, self.lines),
            doc=clip(ast.get_docstring(node) or "", MAX_DOC_CHARS),
            defines=(node.name, *members),
            uses=_uses(text),
            bases=bases,
            text=text,
        )
        return start, end


def _direct_defs(body: list[ast.stmt]) -> list[_Def]:
    """The defs of a body, also those inside `if`/`try`/`with` blocks."""
    out: list[_Def] = []
    for node in body:
        if isinstance(node, _Def):
            out.append(node)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for block in _blocks(node):
                out.extend(_direct_defs(block))
    return out


def _blocks(node: ast.If | ast.Try | ast.With) -> list[list[ast.stmt]]:
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    if isinstance(node, ast.Try):
        return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]
    return [node.body]


def parse_python(path: str, text: str) -> ParsedFile:
    """The units of one Python file; line windows and status `syntax-error` if it does not parse."""
    lines = text_lines(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old code
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        where = f"line {getattr(exc, 'lineno', None)}: " if getattr(exc, "lineno", None) else ""
        note = f"{where}{getattr(exc, 'msg', None) or exc}"
        return line_windows(path, text, "python", status="syntax-error", note=note)
    modname = module_name(path)
    package = modname if path.endswith("__init__.py") else modname.rpartition(".")[0]
    builder = _Builder(path, lines)
    holes = builder.visit(tree.body, "", False)
    top = [u.name for u in builder.units if "." not in u.qualname]
    top += _stored_names([n for n in tree.body if not isinstance(n, _Def)])
    text = own_text(lines, 1, max(len(lines), 1), holes)
    file_unit = CodeUnit(
        path=path,
        kind="file",
        name=path.rsplit("/", 1)[-1],
        qualname=modname,
        start=1,
        end=max(len(lines), 1),
        doc=clip(ast.get_docstring(tree) or "", MAX_DOC_CHARS),
        defines=tuple(dict.fromkeys(top)),
        uses=_uses(text),
        imports=_imports(tree, package),
        text=text,
    )
    return ParsedFile(path, "python", (file_unit, *builder.units))
