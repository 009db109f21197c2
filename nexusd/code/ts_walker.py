"""The walk over one tree-sitter tree that drafts a file's units, in source order.

A `Draft` is a unit while its members are still being found; `lang_treesitter` freezes the
drafts into `CodeUnit`s once it knows each one's identifiers and own lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nexusd.code import lang_queries as q
from nexusd.code.js_statements import assigned_member, function_value, spec_block
from nexusd.code.lang_queries import Grammar
from nexusd.code.ts_docs import doc_of, header_of
from nexusd.code.units import UnitKind

if TYPE_CHECKING:
    from tree_sitter import Node

# Units nested deeper stay text of their parent: real code nests a few levels, and deeper
# generated code would make qualnames and own texts grow with the square of the depth.
MAX_DEPTH = 24
_SPECIFIERS = frozenset(
    {"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}
)
_QUALIFIED = frozenset({"qualified_identifier", "destructor_name"})
# An expression statement, or its assignment where the grammar unwraps statements (TS).
_STATEMENTS = frozenset({"expression_statement", "assignment_expression"})
# A call as a statement: TypeScript's grammar unwraps the statement (a `wrappers` type).
_CALLS = frozenset({"expression_statement", "call_expression"})
_SCOPE_SEPARATOR = re.compile(r"::|\\")
_PHP_NAMESPACE = "namespace_definition"  # C++'s always has a body
_OPERATOR_NAMES = frozenset({"operator", "setter"})  # Ruby's: no generics to strip
_RUBY_CONSTANTS = frozenset({"constant", "scope_resolution"})
_RUBY_MODULE = "module"


def _defines_methods(module: Node, functions: frozenset[str]) -> bool:
    """Whether a Ruby module's body defines methods itself (`def x`, `private def x`)."""
    body = module.child_by_field_name("body")
    for child in body.named_children if body is not None else ():
        if child.type in functions:
            return True
        if child.type == "call" and any(c.type in functions for c in q.call_arguments(child)):
            return True
    return False


def _declares_unit(value: Node) -> bool:
    """Whether a declared value is a unit: a class or a function (`const f = () => …`)."""
    return value.type in q.CLASS_VALUES or function_value(value) is not None


@dataclass
class Draft:
    """A unit being built (mutable while its members are found); frozen as a `CodeUnit`."""

    kind: UnitKind
    name: str
    qualname: str
    start_row: int  # 0-based, with decorators/attributes above the declaration
    end_row: int
    text_row: int  # where its text begins: its doc comment, if any
    first_byte: int
    end_byte: int
    parent: int  # index of the enclosing draft, -1 for the file
    signature: str
    doc: str
    bases: tuple[str, ...]
    depth: int = 1  # 1 for a unit directly in the file
    receiver: str = ""  # Go: the type a method belongs to
    members: list[str] = field(default_factory=list)


@dataclass
class _Frame:
    """Declarations to read, and the unit (or file, -1) they belong to."""

    children: list[Node]
    prefix: str
    owner: int
    in_class: bool
    wanted: frozenset[str]  # node types worth a look here
    index: int = 0


class Builder:
    """Walks one tree with an explicit stack (minified or deeply nested code cannot overflow)
    and drafts its units in source order."""

    def __init__(self, grammar: Grammar, src: bytes) -> None:
        self.g = grammar
        self.src = src
        self.drafts: list[Draft] = []
        self.top: list[str] = []  # names the file defines
        self.claimed: set[int] = set()  # start bytes of comments that are some unit's doc
        self.name_bytes: set[int] = set()  # where units' own names are written (not "uses")
        self.namespaces: set[str] = set()
        g = grammar
        # In a function body only nested declarations matter; statements are most nodes, so
        # this set is small to keep the walk cheap.
        self.in_body = g.classes | g.functions | g.transparent | {"ERROR", "type_declaration"}
        if g.assigned_members:
            self.in_body |= {"expression_statement"}
        self.anywhere = (
            self.in_body
            | g.scopes
            | g.wrappers
            | q.VARIABLES
            | q.FIELDS
            | q.C_DECLARATIONS
            | q.NAMED_MEMBERS
            | q.CLASS_VALUES
            | q.FUNCTION_VALUES
            | {"expression_statement"}
        )

    def walk(self, root: Node) -> None:
        """Read every declaration reachable through containers, in source order."""
        stack = [_Frame(root.named_children, "", -1, False, self.anywhere)]
        while stack:
            frame = stack[-1]
            if frame.index >= len(frame.children):
                stack.pop()
                continue
            frame.index += 1
            if frame.children[frame.index - 1].type in frame.wanted:
                pushed = self.visit(frame, frame.index - 1)
                if pushed is not None:
                    stack.append(pushed)

    def frame(
        self, body: Node, prefix: str, owner: int, in_class: bool, *, leading: bool = False
    ) -> _Frame:
        """The frame of a body; a function's body is read for nested declarations only.
        `leading`: the comments just before the body are read with it (Ruby keeps those
        between `class X` and its first member outside the body; they document the member)."""
        in_function = owner >= 0 and not in_class and self.drafts[owner].kind != "class"
        wanted = self.in_body if in_function else self.anywhere
        children = body.named_children
        if leading:
            comments = []
            before = body.prev_named_sibling
            while before is not None and "comment" in before.type:
                ahead = before.prev_named_sibling
                if ahead is not None and q.last_row(ahead) == before.start_point.row:
                    break  # `class Foo # the foo`: the header's own comment
                comments.append(before)
                before = ahead
            children = [*reversed(comments), *children]
        return _Frame(children, prefix, owner, in_class, wanted)

    def unwrap(self, node: Node) -> Node | None:
        """The declaration a statement wraps: `export …`, `template<…> …`, one `const f = …`."""
        for _ in range(8):  # wrappers nest a few deep at most: `export declare const f = …`
            t = node.type
            inner: Node | None = node
            if t == "export_statement":
                inner = node.child_by_field_name("declaration") or node.child_by_field_name("value")
            elif t in self.g.wrappers or t == "type_declaration" or t in q.VARIABLES:
                kids = [c for c in node.named_children if "comment" not in c.type]
                if t == "template_declaration":
                    inner = kids[-1] if kids else None
                elif t in self.g.wrappers:
                    inner = kids[0] if kids else None
                else:  # several specs or declarators are read one by one, as a group
                    inner = kids[0] if len(kids) == 1 else node
            if inner is None or inner == node:
                return inner
            node = inner
        return node

    def visit(self, frame: _Frame, i: int) -> _Frame | None:
        """Add the unit or names of `frame.children[i]`; the frame of its body, if any."""
        inner = self.unwrap(frame.children[i])
        if inner is None:
            return None
        t, g = inner.type, self.g
        if t == _RUBY_MODULE and _defines_methods(inner, g.functions):
            # A module of methods is a mixin (a concern, `module_function` helpers), a unit
            # as a class is; one of classes and modules only is a namespace.
            return self.unit(frame, i, "class", inner)
        if t in g.scopes:
            name = inner.child_by_field_name("name")
            spelled = "" if name is None or name.type == "string" else q.text(name)
            words = [w for w in _SCOPE_SEPARATOR.split(spelled) if w]  # `a::b`, PHP's `A\B`
            self.namespaces.update(words)
            body = inner.child_by_field_name("body")
            prefix = ".".join(p for p in [frame.prefix, *words] if p)
            if body is None and t == _PHP_NAMESPACE:
                # PHP's `namespace A\B;` holds what follows it, up to the next one.
                frame.prefix = ".".join(words)
                return None
            if body is None or prefix.count(".") >= MAX_DEPTH:
                return None
            return self.frame(body, prefix, frame.owner, False, leading=True)
        if t in g.transparent or t in {"ERROR", "type_declaration"}:
            return self.frame(inner, frame.prefix, frame.owner, frame.in_class)
        if t in q.VARIABLES:
            values = [c.child_by_field_name("value") for c in inner.named_children]
            if any(v is not None and _declares_unit(v) for v in values):
                return self.frame(inner, frame.prefix, frame.owner, frame.in_class)
        if t in g.classes or t in q.CLASS_VALUES:
            if t in _SPECIFIERS and inner.child_by_field_name("body") is None:
                self.names(frame, inner)  # `struct point p;` uses a type, defines none
                return None
            return self.unit(frame, i, "class", inner)
        if t in q.C_DECLARATIONS:
            spec = inner.child_by_field_name("type")
            if spec is not None and spec.type in g.classes and spec.child_by_field_name("body"):
                name = spec.child_by_field_name("name")
                if name is None and t == "type_definition":
                    name = inner.child_by_field_name("declarator")
                if name is not None:
                    return self.unit(frame, i, "class", spec, decl=spec, name_node=name)
            self.names(frame, inner)
            return None
        if t in _CALLS and g.assigned_members:
            block = spec_block(inner)
            if block is not None:
                # A test's callback is where its code is: without a unit, a test file of
                # `describe`/`it` blocks had none, and its words counted once (evidence.py).
                title, callback = block
                return self.unit(frame, i, "function", inner, decl=callback, title=title)
        if t in _STATEMENTS and g.assigned_members:
            assigned = assigned_member(inner)
            if assigned is not None:
                # `Layer.prototype.handle = function …`, `res.send = function …`: Express
                # defines most of its methods so; the unit is `Layer.handle`, `res.send`.
                owner, prop, assigned_value = assigned
                prefix = ".".join(p for p in [frame.prefix, owner] if p)
                # `this.run = function …` in an ES5 constructor `function Runner() {…}`: a
                # method of what the function constructs, not a closure of it.
                # `Runner.prototype.stop = function …` is a method too, where `Runner` is a
                # function of the file (its qualname alone would make it a closure of it).
                method = bool(owner) and (owner != "this" or self._in_function(frame))
                if owner == "this":
                    prefix = frame.prefix
                scoped = _Frame(frame.children, prefix, frame.owner, method, frame.wanted)
                is_class = assigned_value.type in q.CLASS_VALUES
                kind: UnitKind = "class" if is_class else "function"
                return self.unit(scoped, i, kind, inner, decl=assigned_value, name_node=prop)
            return None
        if t in g.functions or t in q.FUNCTION_VALUES:
            return self.unit(frame, i, "function", inner)
        if t == "variable_declarator" or t in q.FIELDS:
            value = inner.child_by_field_name("value")
            name = inner.child_by_field_name("name") or inner.child_by_field_name("property")
            if value is not None and name is not None and name.type in q.NAME_TYPES:
                if value.type in q.CLASS_VALUES:
                    return self.unit(frame, i, "class", inner, decl=value, name_node=name)
                function = function_value(value)
                if function is not None:
                    return self.unit(frame, i, "function", inner, decl=function, name_node=name)
        if t in q.NAMED_MEMBERS:
            self.names(frame, inner)
            value, left = inner.child_by_field_name("right"), inner.child_by_field_name("left")
            # Ruby's `Point = Struct.new(:x) do … end`: the block's methods are Point's.
            if value is not None and value.type == "call" and left and left.type in _RUBY_CONSTANTS:
                named = q.text(left).replace("::", ".")
                prefix = ".".join(p for p in [frame.prefix, named] if p)
                return _Frame([value], prefix, frame.owner, True, frame.wanted)
        return None

    def _in_function(self, frame: _Frame) -> bool:
        """Whether `frame` is the body of a function or method (not a class, not the file)."""
        return frame.owner >= 0 and self.drafts[frame.owner].kind in ("function", "method")

    def names(self, frame: _Frame, node: Node) -> None:
        """Record a declaration's names on the file or class that owns it (not a function)."""
        if frame.owner == -1:
            self.top.extend(q.names(node))
        elif self.drafts[frame.owner].kind == "class":
            self.drafts[frame.owner].members.extend(q.names(node))

    def attached(self, siblings: list[Node], i: int) -> tuple[int, int, int, str]:
        """(first row, first byte, text row, doc) of `siblings[i]` with what is written above."""
        node = siblings[i]
        row, first_byte = node.start_point.row, node.start_byte
        j = i - 1
        while j >= 0 and siblings[j].type in self.g.attached and q.last_row(siblings[j]) >= row - 1:
            row, first_byte = siblings[j].start_point.row, siblings[j].start_byte
            j -= 1
        start_row, comments = row, []
        while j >= 0 and "comment" in siblings[j].type and q.last_row(siblings[j]) >= row - 1:
            comment = siblings[j]
            prev = siblings[j - 1] if j > 0 else None
            if (
                prev is not None
                and "comment" not in prev.type
                and q.last_row(prev) == comment.start_point.row
            ):
                break  # `}  // namespace io`: a trailing comment of the node before
            if q.text(comment).startswith(("//!", "/*!")):
                break  # Rust inner docs describe the enclosing module
            comments.append(comment)
            row = comment.start_point.row
            j -= 1
        comments.reverse()
        self.claimed.update(c.start_byte for c in comments)
        return start_row, first_byte, row, doc_of(comments) if comments else ""

    def unit(
        self,
        frame: _Frame,
        i: int,
        kind: UnitKind,
        inner: Node,
        *,
        decl: Node | None = None,
        name_node: Node | None = None,
        title: str | None = None,
    ) -> _Frame | None:
        """Add the unit `inner` declares (its body and bases on `decl`); its body's frame.
        A `title` (a test block's `it("…")`) is its name, and no name the file defines."""
        outer = frame.children[i]
        decl = inner if decl is None else decl
        if title is not None:
            name_node = None
        elif name_node is None:
            name_node = inner.child_by_field_name("name")
            if name_node is None and inner.type == "function_definition":  # C's, not PHP's
                name_node = q.declarator_name(inner)
        spelled = q.text(name_node)
        if name_node is not None and name_node.type in _OPERATOR_NAMES:
            name = spelled  # Ruby's `def []=(key, value)`, `def <=>(other)`, `def name=(v)`
        else:
            name = title or q.simple(spelled)
        name = name or ("default" if outer.type == "export_statement" else "")
        if inner.type == "impl_item":
            name = q.type_name(q.text(inner.child_by_field_name("type")))
        if not name:
            return None
        qualname = f"{frame.prefix}.{name}" if frame.prefix else name
        receiver = ""
        if kind == "function":
            kind = "method" if frame.in_class else "function"
            scope = [p for p in q.strip_generics(spelled).split("::")[:-1] if p]
            go_receiver = (
                inner.child_by_field_name("receiver")
                if inner.type == "method_declaration"
                else None
            )
            if go_receiver is not None:
                receiver = q.type_name(q.text(go_receiver))
                kind, qualname = "method", f"{receiver}.{name}"
            elif scope:  # C++ `void Shape::draw()`: a method, unless the scope is a namespace
                kind = "function" if scope[-1] in self.namespaces else "method"
                qualname = ".".join(p for p in [frame.prefix, *scope, name] if p)
        elif kind == "class" and "::" in spelled:  # Ruby's `class Foo::Bar`: Bar of Foo
            scope = [p for p in q.strip_generics(spelled).split("::")[:-1] if p]
            outer_prefix = "" if spelled.startswith("::") else frame.prefix  # `class ::Top`
            qualname = ".".join(p for p in [outer_prefix, *scope, name] if p)
        while name_node is not None and name_node.type in _QUALIFIED:  # `A::~A` → `A`
            name_node = name_node.child_by_field_name("name") or name_node.named_children[-1]
        if name_node is not None:
            self.name_bytes.add(name_node.start_byte)
        start_row, first_byte, text_row, doc = self.attached(frame.children, i)
        body = q.members_node(decl) if kind == "class" else decl.child_by_field_name("body")
        index = len(self.drafts)
        self.drafts.append(
            Draft(
                kind=kind,
                name=name,
                qualname=qualname,
                start_row=start_row,
                end_row=q.last_row(outer),
                text_row=text_row,
                first_byte=first_byte,
                end_byte=outer.end_byte,
                parent=frame.owner,
                signature=self.signature(outer, body, kind == "class"),
                doc=doc,
                bases=q.bases(decl) if kind == "class" else (),
                depth=self.drafts[frame.owner].depth + 1 if frame.owner >= 0 else 1,
                receiver=receiver,
            )
        )
        # Not Go's or C++'s methods outside their type; not a test, a name nobody uses.
        if title is None and (kind != "method" or frame.in_class):
            if frame.owner == -1:
                self.top.append(name)
            else:
                self.drafts[frame.owner].members.append(name)
        if body is None or self.drafts[index].depth >= MAX_DEPTH:
            return None
        return self.frame(body, qualname, index, kind == "class", leading=True)

    def signature(self, outer: Node, body: Node | None, is_class: bool) -> str:
        """The declaration's header up to its body, on one line."""
        return header_of(self.src, outer, body, is_class=is_class)
