"""Per-language tables for the tree-sitter extractor, and readers of one node's parts.

Each grammar names its declarations differently; the extractor reads these sets instead of
branching on the language, so adding a language is mostly a new `Grammar` here. Node type
names are those of the grammar wheels' `node-types.json`. Nothing here imports tree-sitter
at run time: the nodes come from `lang_treesitter`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

EXTENSIONS: dict[str, str] = {
    **dict.fromkeys([".js", ".mjs", ".cjs", ".jsx"], "javascript"),
    **dict.fromkeys([".ts", ".mts", ".cts"], "typescript"),
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    **dict.fromkeys([".c", ".h"], "c"),
    # `.ipp`, `.inl`, `.tcc`: C++ headers' implementation parts, included into them.
    **dict.fromkeys([".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".ipp", ".inl", ".tcc"], "cpp"),
    ".php": "php",
    **dict.fromkeys([".rb", ".rake", ".gemspec", ".ru"], "ruby"),
}


def _types(names: str) -> frozenset[str]:
    """A set of node types written as one space-separated string."""
    return frozenset(names.split())


def _ids(names: str) -> str:
    """A query capturing every node of these types as `@id`."""
    return "[" + " ".join(f"({t})" for t in names.split()) + "] @id\n"


@dataclass(frozen=True)
class Grammar:
    """How one language's tree reads: its grammar wheel and the node types that matter."""

    module: str  # the PyPI wheel's import name
    entry: str  # its function returning the language pointer
    classes: frozenset[str]  # type-like declarations → kind "class"
    functions: frozenset[str]  # → "function", or "method" inside a class
    # captures: @id identifiers, @imp import strings, @rel paths relative to the file,
    # @use Rust's and PHP's use declarations (ts_imports.py reads them)
    query: str
    scopes: frozenset[str] = frozenset()  # namespaces: prefix qualnames, are not units
    transparent: frozenset[str] = frozenset()  # blocks whose children count as siblings
    wrappers: frozenset[str] = frozenset()  # `export …`, `template<…> …` around a unit
    attached: frozenset[str] = frozenset()  # decorators/attributes written above a unit
    # `obj.name = function …` defines a unit, in a function's body too: JavaScript's
    # prototypes and plugins (`proto.week = function …` inside `export default (o, c) => …`).
    assigned_members: bool = False


_JS_IMPORTS = """
(import_statement source: (string) @imp)
(export_statement source: (string) @imp)
((call_expression function: (identifier) @_f arguments: (arguments . (string) @imp))
 (#eq? @_f "require"))
(call_expression function: (import) arguments: (arguments . (string) @imp))
"""
_JS_FUNCTIONS = _types("function_declaration generator_function_declaration method_definition")
_TS_CLASSES = _types(
    "class_declaration abstract_class_declaration interface_declaration enum_declaration"
    " type_alias_declaration"
)
_TS = Grammar(
    module="tree_sitter_typescript",
    entry="language_typescript",
    classes=_TS_CLASSES,
    functions=_JS_FUNCTIONS,
    query=_ids("identifier type_identifier property_identifier shorthand_property_identifier")
    + _JS_IMPORTS
    + "(import_require_clause source: (string) @imp)\n",
    scopes=_types("internal_module module"),
    # `declare …`, and `namespace X {…}`, which the grammar writes as an expression
    wrappers=_types("export_statement ambient_declaration expression_statement"),
    attached=_types("decorator"),
    assigned_members=True,
)
_C_CLASSES = _types("struct_specifier union_specifier enum_specifier")
_C_BLOCKS = _types(
    "preproc_if preproc_ifdef preproc_else preproc_elif preproc_elifdef"
    " linkage_specification declaration_list"
)
_INCLUDES = "(preproc_include path: (_) @imp)\n"
_RUBY_REQUIRES = """
((call method: (identifier) @_f arguments: (argument_list . (string) @imp))
 (#eq? @_f "require"))
((call method: (identifier) @_f arguments: (argument_list . (string) @rel))
 (#eq? @_f "require_relative"))
"""

GRAMMARS: dict[str, Grammar] = {
    "javascript": Grammar(
        module="tree_sitter_javascript",
        entry="language",
        classes=_types("class_declaration"),
        functions=_JS_FUNCTIONS,
        query=_ids("identifier property_identifier shorthand_property_identifier") + _JS_IMPORTS,
        wrappers=_types("export_statement"),
        attached=_types("decorator"),
        assigned_members=True,
    ),
    "typescript": _TS,
    "tsx": replace(_TS, entry="language_tsx"),
    "go": Grammar(
        module="tree_sitter_go",
        entry="language",
        classes=_types("type_spec type_alias"),
        functions=_types("function_declaration method_declaration"),
        query=_ids("identifier field_identifier type_identifier package_identifier")
        + "(import_spec path: (_) @imp)\n",
        transparent=_types("statement_list"),
    ),
    "rust": Grammar(
        module="tree_sitter_rust",
        entry="language",
        classes=_types("struct_item enum_item union_item trait_item impl_item type_item"),
        # `macro_rules! select { … }` is where `tokio::select!` is written.
        functions=_types("function_item macro_definition"),
        query=_ids("identifier field_identifier type_identifier")
        + "(use_declaration argument: (_) @use)\n",
        scopes=_types("mod_item"),
        attached=_types("attribute_item"),
    ),
    "java": Grammar(
        module="tree_sitter_java",
        entry="language",
        classes=_types(
            "class_declaration interface_declaration enum_declaration record_declaration"
            " annotation_type_declaration"
        ),
        functions=_types(
            "method_declaration constructor_declaration compact_constructor_declaration"
        ),
        query=_ids("identifier type_identifier") + "(import_declaration) @imp\n",
        transparent=_types("enum_body_declarations"),
    ),
    "c": Grammar(
        module="tree_sitter_c",
        entry="language",
        classes=_C_CLASSES,
        # A function-like macro (`#define jv_is_valid(x) …`) is code a fix may change.
        functions=_types("function_definition preproc_function_def"),
        query=_ids("identifier field_identifier type_identifier") + _INCLUDES,
        transparent=_C_BLOCKS,
    ),
    "cpp": Grammar(
        module="tree_sitter_cpp",
        entry="language",
        classes=_C_CLASSES | {"class_specifier"},
        functions=_types("function_definition preproc_function_def"),
        query=_ids("identifier field_identifier type_identifier namespace_identifier") + _INCLUDES,
        scopes=_types("namespace_definition"),
        transparent=_C_BLOCKS,
        wrappers=_types("template_declaration"),
    ),
    "php": Grammar(
        module="tree_sitter_php",
        entry="language_php",  # PHP with the HTML around `<?php … ?>`, as files are
        classes=_types(
            "class_declaration interface_declaration trait_declaration enum_declaration"
        ),
        functions=_types("function_definition method_declaration"),
        query=_ids("name") + "(namespace_use_declaration) @use\n",
        scopes=_types("namespace_definition"),
        # Helpers are declared inside `if (! function_exists('collect')) { … }`.
        transparent=_types(
            "if_statement compound_statement colon_block else_clause else_if_clause"
        ),
    ),
    "ruby": Grammar(
        module="tree_sitter_ruby",
        entry="language",
        classes=_types("class"),
        functions=_types("method singleton_method"),
        query=_ids("identifier constant") + _RUBY_REQUIRES,
        scopes=_types("module"),
        # `class << self … end` holds class methods: members of the class around it; so do
        # `private def x`, `Struct.new(…) do … end`, `included do … end` and the branches of
        # an `if`.
        transparent=_types(
            "singleton_class body_statement call argument_list do_block block block_body"
            " if unless else then elsif begin"
        ),
    ),
}

# Declarations whose value may be a function or class: `const f = () => …`, `handle = () => …`.
VARIABLES = _types("lexical_declaration variable_declaration")
FIELDS = _types("field_definition public_field_definition")
FUNCTION_VALUES = _types("arrow_function function_expression function generator_function")
CLASS_VALUES = _types("class")
# C and C++ declarations that may carry a `struct {…}` type: the unit spans the declaration.
C_DECLARATIONS = _types("declaration field_declaration type_definition")
# Declarations whose names a unit (or the file) defines though they are not units themselves.
NAMED_MEMBERS = _types(
    # JS/TS
    "field_definition public_field_definition property_signature method_signature"
    " abstract_method_signature function_signature enum_assignment property_identifier"
    " lexical_declaration variable_declaration variable_declarator"
    # Go
    " field_declaration method_elem var_declaration const_declaration var_spec const_spec"
    " var_spec_list"
    # Rust
    " const_item static_item macro_definition function_signature_item enum_variant"
    " associated_type"
    # Java
    " enum_constant constant_declaration annotation_type_element_declaration"
    # C/C++
    " declaration type_definition alias_declaration enumerator preproc_def preproc_function_def"
    # PHP (`const_declaration` is Go's too), Ruby (`LIMIT = 80`)
    " property_declaration enum_case assignment"
)
# Leaf node types that spell a declared name.
NAME_TYPES = _types(
    "identifier type_identifier field_identifier property_identifier private_property_identifier"
    " namespace_identifier destructor_name operator_name qualified_identifier package_identifier"
    " name constant"  # PHP's names, Ruby's constants
)

# Children of a class that name what it extends or implements.
BASE_CLAUSES = _types(
    "class_heritage implements_clause extends_type_clause superclass super_interfaces"
    " extends_interfaces base_class_clause trait_bounds base_clause class_interface_clause"
)
_LISTS = _types("type_list extends_clause implements_clause")
_NOT_BASES = _types("access_specifier type_arguments")
_GROUPS = frozenset(
    {"var_declaration", "const_declaration", "var_spec_list", "property_declaration", *VARIABLES}
)
# PHP's `const A = …` and `$items` spell their name first, with no field for it.
_FIRST_NAMED = _types("const_element variable_name")
_GENERIC = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_WORD = re.compile(r"[A-Za-z_$~][\w$]*")


# Query captures come grouped by pattern, not in source order: sort them by this.
START = attrgetter("start_byte")


def text(node: Node | None) -> str:
    """The node's source text ("" for none)."""
    raw = node.text if node is not None else None
    return raw.decode("utf-8", "replace") if raw else ""


def call_arguments(call: Node) -> list[Node]:
    """A call's arguments, comments left out (`f(/*@__PURE__*/ x)`); none when it has none."""
    found = call.child_by_field_name("arguments")
    return [a for a in found.named_children if "comment" not in a.type] if found else []


def last_row(node: Node) -> int:
    """The node's last line (0-based): a line comment's trailing newline is not a line."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def strip_generics(name: str) -> str:
    """`Foo<T>::bar`, `Stack[T]` → `Foo::bar`, `Stack` (nested brackets too)."""
    while True:
        bare = _GENERIC.sub("", name)
        if bare == name:
            return name
        name = bare


def simple(name: str) -> str:
    """`a::b::C<T>` → `C`: the last part of a qualified name."""
    return strip_generics(name).rsplit("::", 1)[-1].strip()


def type_name(spelled: str) -> str:
    """`*Stack[T]`, `&'a Wrapper<T>`, `fmt::Display` → the type's own name."""
    words = _WORD.findall(strip_generics(spelled).rsplit("::", 1)[-1])
    return words[-1] if words else spelled.strip()


def names(node: Node) -> list[str]:
    """Names a non-unit declaration binds: fields, variables, constants, prototypes, macros."""
    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in NAME_TYPES:
            out.append(simple(text(n)))
            continue
        if n.type in _FIRST_NAMED:
            found = n.named_children[:1]
        elif n.type in _GROUPS:
            found = n.named_children
        else:
            found = (
                n.children_by_field_name("name")
                or n.children_by_field_name("property")
                or n.children_by_field_name("declarator")
                or n.children_by_field_name("left")  # Ruby: `LIMIT = 80`
            )
        stack.extend(reversed(found))
    return [name for name in out if name]


def declarator_name(node: Node) -> Node | None:
    """The name node inside a C/C++ declarator chain (`*f(…)`, `Cls::m(…)`)."""
    d = node.child_by_field_name("declarator")
    for _ in range(64):  # declarator chains are short; the bound guards odd trees
        if d is None or d.type in NAME_TYPES:
            return d
        d = (
            d.child_by_field_name("declarator")
            or d.child_by_field_name("name")
            or (d.named_children[-1] if d.named_child_count else None)
        )
    return None


def bases(node: Node) -> tuple[str, ...]:
    """Extended and implemented types as written (`Shape`, `Base<T>`), where the grammar says."""
    out: list[str] = []
    for clause in node.named_children:
        if clause.type not in BASE_CLAUSES:
            continue
        for part in clause.named_children:
            if part.type in _LISTS:
                out.extend(text(p) for p in part.named_children if p.type not in _NOT_BASES)
            elif part.type not in _NOT_BASES and "comment" not in part.type:
                out.append(text(part))
    trait = node.child_by_field_name("trait")  # Rust: `impl Display for Point`
    if trait is not None:
        out.append(text(trait))
    # PHP's `\Countable`, `Foo\Bar` read as the dotted names other languages' bases are
    dotted = (b.lstrip("\\").replace("\\", ".") for b in out)
    return tuple(dict.fromkeys(b for b in dotted if b))


def members_node(decl: Node) -> Node | None:
    """Where a class keeps its members: its body, or Go's `struct {…}` / `interface {…}`."""
    body = decl.child_by_field_name("body")
    if body is not None:
        return body
    value = decl.child_by_field_name("type") or decl.child_by_field_name("value")
    if value is None:
        return None
    if value.type == "struct_type":
        return next((c for c in value.named_children if c.type == "field_declaration_list"), None)
    return value if value.type in {"interface_type", "object_type"} else None
