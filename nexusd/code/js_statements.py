"""JavaScript statements that declare units without a declaration: a function set on an
object (`Layer.prototype.handle = function …`), a test framework's block
(`it("pads the year", () => …)`) and a function a call wraps (`forwardRef((p, r) => {…})`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nexusd.code import lang_queries as q

if TYPE_CHECKING:
    from tree_sitter import Node

# Test frameworks' blocks (Mocha, Jest, Jasmine, Vitest, node:test): `describe('…', () => {…})`.
TEST_BLOCKS = frozenset({"describe", "context", "suite", "it", "test", "specify"})
# What a test framework's block may be called through: `it.only`, `test.concurrent.skip`.
_MODIFIERS = frozenset(
    {"only", "skip", "todo", "concurrent", "serial", "parallel", "sequential", "fixme", "fails"}
)
# A test's title in its unit's name: enough to tell it from its neighbours.
MAX_TITLE_CHARS = 80
# A test block's name in a qualname, `describe("#indexOf()")`: its title holds no dot.
TITLED = re.compile(r'[A-Za-z]+\("[^.]*?"\)(?=\.|$)')

_OWN = frozenset({"module", "exports", "module.exports", "this"})
# An owner written as plain names (`res`, `Layer`, `app.request`), not an expression.
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def spec_block(statement: Node) -> tuple[str, Node] | None:
    """(name, callback) of a test block, `it("adds", () => …)` → `it("adds")`; None for any
    other statement. `it.only(…)`, `describe.skip(…)` are blocks too; `test.each(…)(…)` is not
    (its title is a template of each case's)."""
    call: Node | None = statement
    if statement.type == "expression_statement":
        call = statement.named_children[0] if statement.named_children else None
    if call is None or call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    if function is None:
        return None
    # `it.only`, `test.concurrent.skip`; Playwright's `test.describe` is a `describe`. Any
    # other member (`context.app.get(…)` in a server) is no test framework's.
    kind = ""
    while function is not None and function.type == "member_expression":
        prop = q.text(function.child_by_field_name("property"))
        if prop not in TEST_BLOCKS and prop not in _MODIFIERS:
            return None
        kind = kind or (prop if prop in TEST_BLOCKS else "")
        function = function.child_by_field_name("object")
    if function is None or function.type != "identifier" or q.text(function) not in TEST_BLOCKS:
        return None
    args = q.call_arguments(call)
    if len(args) < 2 or args[0].type not in ("string", "template_string"):
        return None
    callback = next((a for a in args[1:] if a.type in q.FUNCTION_VALUES), None)
    if callback is None:
        return None
    words = " ".join(q.text(args[0])[1:-1].replace(".", " ").split()) or "…"
    if len(words) > MAX_TITLE_CHARS:
        words = words[: MAX_TITLE_CHARS - 1].rstrip() + "…"
    # Quoted, so that no identifier a request uses is ever this name (definitions.py).
    return f'{kind or q.text(function)}("{words}")', callback


def is_test_block(name: str) -> bool:
    """Whether a unit's name is a test block's, `it("pads the year")`, not a name code uses."""
    return TITLED.fullmatch(name) is not None


def assigned_member(statement: Node) -> tuple[str, Node, Node] | None:
    """(owner, name node, value) of `owner.name = function …` (or `= class …`), with
    `.prototype` dropped from the owner; None for any other statement."""
    expr: Node | None = statement
    if statement.type != "assignment_expression":
        expr = statement.named_children[0] if statement.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if left is None or right is None or left.type != "member_expression":
        return None
    if right.type not in q.FUNCTION_VALUES | q.CLASS_VALUES:
        return None
    name, owner = left.child_by_field_name("property"), left.child_by_field_name("object")
    if name is None or owner is None or name.type != "property_identifier":
        return None
    spelled = q.text(owner).removesuffix(".prototype")
    if spelled == "this":
        return spelled, name, right  # the enclosing scope's, a method where that constructs
    if spelled in _OWN or not _DOTTED.fullmatch(spelled):
        spelled = ""  # `module.exports.parse = …`: the enclosing scope's
    return spelled, name, right


def function_value(value: Node) -> Node | None:
    """The function a declaration's value is: itself, or the one a call wraps (React's
    `forwardRef((props, ref) => {…})`, `memo(function X() {…})`, zod's `$constructor("X",
    (inst, def) => {…})`), one wrapper inside another at most; None for any other value,
    and for a wrapped one-expression arrow (`rows.map(r => r.id)` is data, not code)."""
    for depth in range(3):
        if value.type in q.FUNCTION_VALUES:
            body = value.child_by_field_name("body")
            wrapped_expression = depth > 0 and body is not None and body.type != "statement_block"
            return None if wrapped_expression else value
        if value.type != "call_expression":
            return None
        arguments = q.call_arguments(value)
        wrapped = [a for a in arguments if a.type in q.FUNCTION_VALUES | {"call_expression"}]
        if len(wrapped) != 1:
            return None
        value = wrapped[0]
    return None
