"""The comments, headers and errors of a tree-sitter tree: a unit's doc comment and
signature, the file's leading doc, and where the first syntax error is."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexusd.code.lang_queries import last_row, text
from nexusd.code.units import MAX_DOC_CHARS, MAX_SIGNATURE_CHARS, clip

if TYPE_CHECKING:
    from tree_sitter import Node

HEADER_BYTES = 2000  # a header longer than this is clipped anyway

_PACKAGES = frozenset({"package_clause", "package_declaration"})


def clean_comment(raw: str) -> str:
    """A comment's words without `//`, `///`, `/**`, ` * ` and `*/`."""
    body = raw.strip()
    if body.startswith("/*"):
        lines = [
            line.strip().lstrip("*!").strip() for line in body[2:].removesuffix("*/").split("\n")
        ]
    else:
        # `//`, `///`, `//!`, and the `#` of Ruby, PHP and shell
        lines = [line.strip().lstrip("/#").lstrip("!").strip() for line in body.split("\n")]
    return "\n".join(lines).strip()


def doc_of(comments: list[Node]) -> str:
    """The cleaned words of a comment block, clipped for the index."""
    return clip("\n".join(clean_comment(text(c)) for c in comments), MAX_DOC_CHARS)


def first_error(root: Node) -> str:
    """`line N: …` for the first error or missing node in the tree."""
    node = root
    for _ in range(1_000_000):  # one level per turn; the bound only guards odd trees
        for child in node.children:
            if child.is_error or child.is_missing:
                what = f"missing {child.type}" if child.is_missing else "syntax error"
                return f"line {child.start_point.row + 1}: {what}"
            if child.has_error:
                node = child
                break
        else:
            break
    return f"line {node.start_point.row + 1}: syntax error"


def file_doc(root: Node, claimed: set[int]) -> str:
    """The comment block at the top of the file that no declaration claims."""
    blocks: list[list[Node]] = []
    last = -2
    following: Node | None = None
    for node in root.named_children:
        if node.type in {"hash_bang_line", "php_tag"}:
            continue
        if "comment" not in node.type:
            following = node
            break
        if node.start_point.row > last + 1 or not blocks:
            blocks.append([])
        blocks[-1].append(node)
        last = last_row(node)
    blocks = [b for b in blocks if not any(c.start_byte in claimed for c in b)]
    if not blocks:
        return ""
    chosen = blocks[0]
    packaged = following is not None and following.type in _PACKAGES
    if packaged and following is not None and following.start_point.row <= last + 1:
        chosen = blocks[-1]  # Go and Java: the package doc sits right above `package`
    return doc_of(chosen)


def header_of(src: bytes, outer: Node, body: Node | None, *, is_class: bool) -> str:
    """A declaration's header up to its body, on one line: its signature."""
    end = outer.end_byte
    if body is not None and body.type != "interface_type":
        end = body.start_byte
    end = min(end, outer.start_byte + HEADER_BYTES)
    # Ruby keeps a comment after the header (`def f # TODO …`, a first member's doc) in
    # the declaration, before its body: the header ends there. A comment with more of
    # the header after it (PHP's `public /* api */ function r()`) ends nothing.
    children = [c for c in outer.named_children if c.start_byte < end]
    for k, child in enumerate(children):
        if "comment" not in child.type or child.start_byte <= outer.start_byte:
            continue
        if all("comment" in later.type for later in children[k + 1 :]):
            end = child.start_byte
            break
    header = src[outer.start_byte : end].decode("utf-8", "replace")
    if is_class and "{" in header:  # `type Reader interface {…}`: no body node to stop at
        header = header[: header.index("{")]
    return clip(header.rstrip().rstrip("{;=").rstrip(), MAX_SIGNATURE_CHARS)
