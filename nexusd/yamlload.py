"""Safe YAML loading for every file nexusd reads: plain data only, errors as YAML errors.

PyYAML lets Python's own errors out of its constructors: `2025-02-30` (ValueError: day is
out of range), an integer of more than 4300 digits, `!!int x`, `!!bool x` (KeyError),
`!!timestamp x` (AttributeError). Every caller handles yaml.YAMLError, and only that, so
they are turned into one, at the value's line. The strict loader (configuration files)
also refuses a mapping that repeats a key: PyYAML keeps the last without a word, so a
second `watch:` block silently undid the first.

Where a repeated key is comes from the YAML's structure, read again by PyYAML's Python
composer (only then: libyaml's is the fast one), which sees what libyaml's nodes hide: an
alias used as a key (`*k :`) is the anchored node itself, so its position is the anchor's.

Lists and mappings nested deeper than MAX_DEPTH are refused (NestingTooDeep) before any
value is built: PyYAML builds nested mappings (and composes, in Python) by recursion, so
~200 levels of `{a: {a: …}}` ran out of Python's stack, a RecursionError no caller handles.
"""

from __future__ import annotations

from typing import Any

import yaml

# libyaml's safe loader when PyYAML was built with it: ~7x faster on large front matter.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"
# Far more than any request or configuration needs (they nest a few levels), and few enough
# that building the deepest document allowed (~5 frames a level for the strict loader's
# mappings, 3 for the Python composer) leaves most of Python's 1000 frames to the caller.
MAX_DEPTH = 64
# Every list or mapping starts at one of these (`- `, `key:`, `? key`, `[`, `{`): a text with
# no more of them than MAX_DEPTH cannot nest too deep, and is not scanned for it.
_OPENERS = "-:?[{"
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"  # libyaml's own limit's problem


def key_name(key: object) -> str:
    """A key as YAML would write it: `null`, `true`, `false`, else its text."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


class DuplicateKey(yaml.YAMLError):
    """A mapping names one key twice; `key` and both 1-based lines say where.

    `path` leads from the top of the document to the mapping that repeats the key: the keys
    (as `key_name` writes them) and list positions (ints) on the way; empty at the top level.
    `written` is the text of each of the two keys as written (`~` and `null`, `goal` and
    `*k`, `'a: b'` twice). When PyYAML's Python parser cannot read what libyaml read (a tab
    before a comment), `path` and `written` are None, unknown, and so is the line of a key
    written as an alias (its node is the anchored one, placed where the anchor is).
    """

    def __init__(
        self,
        key: object,
        first: int | None,
        second: int | None,
        *,
        path: tuple[str | int, ...] | None = None,
        written: tuple[str, str] | None = None,
    ) -> None:
        self.key, self.first, self.second = key, first, second
        self.path, self.written = path, written
        forms = ""
        if written is not None and written[0] != written[1]:
            forms = f" (written `{written[0]}` and `{written[1]}`)"
        super().__init__(f"`{key_name(key)}` is given twice{forms}, {on_lines(first, second)}")


class NestingTooDeep(yaml.MarkedYAMLError):
    """Lists and mappings nested deeper than MAX_DEPTH, or too deep for the stack left.

    `line` (1-based) is where the first list or mapping deeper than MAX_DEPTH opens; None
    when unknown, as when the document is within MAX_DEPTH but the stack ran out (`over` is
    then False: the caller was already deep in its own calls). `problem` says which, as a
    phrase: `lists and mappings nest deeper than 64 levels`.
    """

    def __init__(self, mark: yaml.Mark | None, *, over: bool = True) -> None:
        deeper = f"deeper than {MAX_DEPTH} levels" if over else "too deep to read"
        super().__init__(problem=f"lists and mappings nest {deeper}", problem_mark=mark)
        self.line = None if mark is None else mark.line + 1


def _check_depth(text: str) -> None:
    """Raise NestingTooDeep where `text` first nests deeper than MAX_DEPTH.

    Counted on the parser's events, which libyaml and PyYAML's Python parser both produce
    without recursion, so no depth can make this check itself run out of stack. Text that
    is not YAML passes when its error comes first: loading it says what is wrong.
    """
    if sum(map(text.count, _OPENERS)) <= MAX_DEPTH:
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BASE):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise NestingTooDeep(_start(event))
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except NestingTooDeep:
        raise
    except yaml.MarkedYAMLError as exc:
        # libyaml stops at 1000 levels, and its scanner reads ahead: `[[[[…` 1000 deep is
        # refused before the parser hands over the 65th start. That is this limit too.
        if exc.problem == _LIBYAML_TOO_DEEP:
            raise NestingTooDeep(exc.problem_mark) from None
    except yaml.YAMLError:
        pass


def _start(event: yaml.Event) -> yaml.Mark | None:
    """Where `event` starts, as PyYAML's Mark (libyaml's has the same fields, not its type)."""
    mark = event.start_mark
    if mark is None:
        return None
    return yaml.Mark(mark.name, mark.index, mark.line, mark.column, None, 0)


def on_lines(first: int | None, second: int | None) -> str:
    """`on lines 3 and 6`, `on line 3`, or what is known of the two lines."""
    if first is not None and second is not None:
        return f"on line {first}" if first == second else f"on lines {first} and {second}"
    known = first if first is not None else second
    alias = "through an alias, on a line nexusd cannot tell"
    return f"on line {known} and {alias}" if known is not None else f"both {alias}"


class _Values:
    """A value PyYAML cannot build reported as a YAML error at its line (a loader mixin)."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """The value of `node`; a ConstructorError where PyYAML raised Python's own."""
        try:
            return super().construct_object(node, deep=deep)  # type: ignore[misc]
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            value = node.value if isinstance(node.value, str) else ""
            shown = f" {value[:40]!r}{'…' if len(value) > 40 else ''}" if value else ""
            why = str(exc).split(";")[0] or type(exc).__name__
            problem = f"cannot read the value{shown} as {node.tag.rsplit(':', 1)[-1]} ({why})"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from exc


class SafeLoader(_Values, _BASE):  # type: ignore[misc]
    """The safe loader, with a value it cannot build reported as a YAML error at its line."""


class StrictLoader(SafeLoader):
    """The safe loader, refusing a mapping that repeats a key (DuplicateKey)."""


class _Locating(_Values, yaml.SafeLoader):
    """The strict loader in pure Python, noting where each key is written and each node sits."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.text = stream
        self.keys: dict[int, list[tuple[int, str]]] = {}  # mapping -> (line, text) per key
        self.parents: dict[int, tuple[yaml.Node, yaml.Node | int]] = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """The node, with where its key was written (an alias's own place) and its parent."""
        if isinstance(parent, yaml.MappingNode) and index is None:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            text = self.text[event.start_mark.index : event.end_mark.index].strip()
            text = " ".join(text.split()) if "\n" in text else text  # an explicit `? |` key
            self.keys.setdefault(id(parent), []).append((event.start_mark.line + 1, text))
        node = super().compose_node(parent, index)
        # An alias is its anchor's node: it keeps the place where the anchor is written.
        if node is not None and parent is not None and id(node) not in self.parents:
            self.parents[id(node)] = (parent, index)
        return node

    def path(self, node: yaml.Node) -> tuple[str | int, ...]:
        """The keys and list positions from the top of the document down to `node`."""
        steps: list[str | int] = []
        while id(node) in self.parents:
            parent, index = self.parents[id(node)]
            if isinstance(index, yaml.Node):
                key = (
                    self.construct_object(index, deep=True)
                    if isinstance(index, yaml.ScalarNode)
                    else "…"
                )
                steps.append(key_name(key))
            else:
                steps.append(index)
            node = parent
        return tuple(reversed(steps))


def _mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[object, int] = {}
    for position, (key_node, _) in enumerate(node.value):
        # `<<: *defaults` merges keys that the mapping may then override: not a repeat.
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            if key not in seen:
                seen[key] = position
                continue
        except TypeError:
            continue  # unhashable: the constructor below says so
        keys = loader.keys.get(id(node), []) if isinstance(loader, _Locating) else []
        if len(keys) == len(node.value):  # else merged (`<<`) before its keys were checked
            (line_1, text_1), (line_2, text_2) = (keys[i] for i in (seen[key], position))
            raise DuplicateKey(
                key, line_1, line_2, path=loader.path(node), written=(text_1, text_2)
            )
        first, second = (_line(node, i) for i in (seen[key], position))
        raise DuplicateKey(key, first, second)
    return dict(loader.construct_mapping(node, deep=deep))


def _line(node: yaml.MappingNode, position: int) -> int | None:
    """The line of the key at `position`; None for an alias (its node sits at the anchor)."""
    key_node = node.value[position][0]
    # An alias names an anchor written before it: a key placed before the end of the entry
    # ahead of it (or before its mapping, for the first) is one.
    floor = node.value[position - 1][1].end_mark if position else node.start_mark
    return None if key_node.start_mark.index < floor.index else key_node.start_mark.line + 1


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Locating.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(text: str, *, strict: bool = False) -> Any:
    """The data of one YAML document; raises yaml.YAMLError (DuplicateKey when `strict`,
    NestingTooDeep for lists and mappings nested deeper than MAX_DEPTH)."""
    _check_depth(text)
    try:
        if not strict:
            return yaml.load(text, Loader=SafeLoader)
        return _load_strict(text)
    except RecursionError:
        # Within MAX_DEPTH, yet the stack ran out (the caller was already deep in its own
        # calls): still too deep to read here, and no caller handles a RecursionError.
        raise NestingTooDeep(None, over=False) from None


def _load_strict(text: str) -> Any:
    try:
        return yaml.load(text, Loader=StrictLoader)
    except DuplicateKey as fast:
        try:
            yaml.load(text, Loader=_Locating)
        except DuplicateKey as placed:
            raise placed from None
        except (yaml.YAMLError, RecursionError):
            # The Python parser disagrees with libyaml's, or its composer (recursive, unlike
            # libyaml's) ran out of a caller's deep stack, even within MAX_DEPTH: keep what
            # libyaml saw.
            pass
        raise fast
