"""Code in other languages through tree-sitter grammar wheels: the same units as for Python.

Each unit's `text` holds its own lines and the doc comment above it, without its nested
units' lines, so a file's words are the sum of its units' and nothing counts twice. The
grammars are imported lazily (`nexusd --help` never loads tree-sitter); a language whose
wheel is missing gives None and the caller indexes the file as line windows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexusd.code.cmacros import masked
from nexusd.code.grammars import grammar, parser
from nexusd.code.lang_queries import EXTENSIONS, GRAMMARS, START
from nexusd.code.lines import own_text
from nexusd.code.ts_docs import file_doc, first_error
from nexusd.code.ts_imports import imports_of
from nexusd.code.ts_walker import Builder, Draft
from nexusd.code.units import CodeUnit, ParsedFile, module_name, text_lines

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["EXTENSIONS", "parse_treesitter"]


def _uses(drafts: list[Draft], ids: list[Node], skip: set[int]) -> list[dict[str, None]]:
    """Distinct identifiers per unit (the file's last), each to the innermost unit around it."""
    found: list[dict[str, None]] = [{} for _ in range(len(drafts) + 1)]
    words: dict[bytes, str] = {}
    open_units: list[int] = []
    k, count = 0, len(drafts)
    for node in sorted(ids, key=START):
        pos = node.start_byte
        while k < count and drafts[k].first_byte <= pos:
            while open_units and drafts[open_units[-1]].end_byte <= drafts[k].first_byte:
                open_units.pop()
            open_units.append(k)
            k += 1
        while open_units and drafts[open_units[-1]].end_byte <= pos:
            open_units.pop()
        if pos in skip:
            continue
        raw = node.text or b""
        word = words.get(raw)
        if word is None:
            word = words[raw] = raw.decode("utf-8", "replace")
        found[open_units[-1] if open_units else -1][word] = None
    return found


def parse_treesitter(path: str, text: str, language: str) -> ParsedFile | None:
    """The units of one file in `language`; None when that grammar wheel is not installed."""
    loaded = grammar(language)
    if loaded is None:
        return None
    lang, query = loaded
    from tree_sitter import QueryCursor

    src = text.encode("utf-8")
    if language in ("c", "cpp"):
        src = masked(src, cpp=language == "cpp")
    root = parser(language, lang).parse(src).root_node
    builder = Builder(GRAMMARS[language], src)
    builder.walk(root)
    drafts = builder.drafts
    captures = QueryCursor(query).captures(root)
    imports = imports_of(captures, language)
    uses = _uses(drafts, captures.get("id", []), builder.name_bytes)
    classes = {d.qualname: d for d in drafts if d.kind == "class"}
    for d in drafts:
        owner = classes.get(d.receiver) if d.receiver else None
        if owner is not None:  # Go: a method is a member of its receiver's type
            owner.members.append(d.name)
    lines = text_lines(text)
    total = max(len(lines), 1)
    holes: list[list[tuple[int, int]]] = [[] for _ in range(len(drafts) + 1)]
    for d in drafts:
        holes[d.parent].append((d.text_row, d.end_row))
    file_unit = CodeUnit(
        path=path,
        kind="file",
        name=path.rsplit("/", 1)[-1],
        qualname=module_name(path),
        start=1,
        end=total,
        doc=file_doc(root, builder.claimed),
        defines=tuple(dict.fromkeys(builder.top)),
        uses=tuple(uses[-1]),
        imports=imports,
        text=own_text(lines, 0, total - 1, holes[-1], base=0),
    )
    units = [file_unit]
    for index, d in enumerate(drafts):
        units.append(
            CodeUnit(
                path=path,
                kind=d.kind,
                name=d.name,
                qualname=d.qualname,
                start=d.start_row + 1,
                end=d.end_row + 1,
                signature=d.signature,
                doc=d.doc,
                defines=tuple(dict.fromkeys([d.name, *d.members])),
                uses=tuple(uses[index]),
                bases=d.bases,
                text=own_text(lines, d.text_row, d.end_row, holes[index], base=0),
            )
        )
    if root.has_error:
        note = first_error(root)
        return ParsedFile(path, language, tuple(units), status="syntax-error", note=note)
    return ParsedFile(path, language, tuple(units))
