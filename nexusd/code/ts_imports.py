"""What a file imports, read from its tree-sitter query captures, in the form the corpus
resolves: a path (`./util`, `stdio.h`, `lib/rubocop/cop/base.rb`, `Illuminate/Support/Str.php`),
a dotted name (`a.b.C`) or a Rust path (`crate::a::b`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nexusd.code.lang_queries import START, text

if TYPE_CHECKING:
    from tree_sitter import Node

# PHP's `use` clauses: the name (`A\B\C`, or `C` in a group) and its optional alias.
_PHP_NAMES = frozenset({"qualified_name", "name", "namespace_name"})


def imports_of(captures: Mapping[str, Sequence[Node]], language: str) -> tuple[str, ...]:
    """The file's imports in source order, once each: `@imp` strings, `@rel` paths relative
    to the file (Ruby's `require_relative`), `@use` trees (Rust's `use`, PHP's `use`)."""
    found: dict[str, None] = {}
    for node in sorted(captures.get("imp", []), key=START):
        found[import_string(node, language)] = None
    for node in sorted(captures.get("rel", []), key=START):
        found["./" + _ruby_file(text(node))] = None
    reader = php_use if language == "php" else rust_use
    for node in sorted(captures.get("use", []), key=START):
        found.update((name, None) for name in reader(node))
    found.pop("", None)
    found.pop("./", None)
    return tuple(found)


def import_string(node: Node, language: str) -> str:
    """`"./util"` → `./util`, `<stdio.h>` → `stdio.h`, `import static a.b.C;` → `a.b.C`,
    Ruby's `require "rubocop/cop"` → `lib/rubocop/cop.rb`."""
    raw = text(node).strip()
    if language == "java":
        raw = raw.removeprefix("import").strip().removeprefix("static").strip()
        return raw.rstrip(";").strip().removesuffix(".*").replace(" ", "")
    if language == "ruby":
        # `require` searches the load path, which a gem's `lib/` is on: a bare `require "set"`
        # is the standard library's unless the repository has a `lib/set.rb`.
        name = _ruby_file(raw)
        return f"lib/{name}" if name else ""
    return raw.strip("\"'`<>")


def _ruby_file(name: str) -> str:
    """A required feature as a file: `rubocop/cop` → `rubocop/cop.rb`."""
    name = name.strip().strip("\"'")
    if not name or "#{" in name:  # an interpolated name is only known at run time
        return ""
    return name if name.endswith(".rb") else name + ".rb"


def php_use(node: Node) -> list[str]:
    """`use A\\B\\{C, D as E};` → `A/B/C.php`, `A/B/D.php`: the file of each class a PHP `use`
    declaration names. PSR-4 keeps `A\\B\\C` in `…/A/B/C.php`, or under a folder standing for
    its first parts (`GuzzleHttp\\Cookie\\CookieJar` in `src/Cookie/CookieJar.php`): the corpus
    takes the path's longest suffix one file has."""
    out: list[str] = []
    prefix = ""
    for child in node.named_children:
        if child.type == "namespace_name":  # the group's common prefix: `use A\B\{…}`
            prefix = text(child)
            continue
        clauses = child.named_children if child.type == "namespace_use_group" else [child]
        for clause in clauses:
            if clause.type != "namespace_use_clause":
                continue
            name = next((c for c in clause.named_children if c.type in _PHP_NAMES), None)
            if name is None:
                continue
            spelled = "\\".join(p for p in [prefix, text(name)] if p)
            path = "/".join(p for p in spelled.split("\\") if p)
            if path:
                out.append(path + ".php")
    return out


def rust_use(node: Node) -> list[str]:
    """`use a::{b, c::d as e}` → `a::b`, `a::c::d`: each path a use tree names."""
    out: list[str] = []
    stack = [(node, "")]
    while stack:
        n, prefix = stack.pop()
        if n.type in {"scoped_use_list", "use_list"}:
            inner = "::".join(p for p in [prefix, text(n.child_by_field_name("path"))] if p)
            items = n.child_by_field_name("list") if n.type == "scoped_use_list" else n
            if items is not None:
                stack.extend((c, inner) for c in reversed(items.named_children))
        elif n.type == "use_as_clause":
            path = n.child_by_field_name("path")
            if path is not None:
                stack.append((path, prefix))
        else:
            word = text(n).removesuffix("*").removesuffix("::")
            joined = "::".join(p for p in [prefix, "" if word == "self" else word] if p)
            if joined:
                out.append(joined)
    return out
