"""Safe YAML loading for every file nexusd reads: plain data only, errors as YAML errors.

PyYAML lets Python's own errors out of its constructors: `2025-02-30` (ValueError: day is
out of range), an integer of more than 4300 digits, `!!int x`, `!!bool x` (KeyError),
`!!timestamp x` (AttributeError). Every caller handles yaml.YAMLError, and only that, so
they are turned into one, at the value's line. The strict loader (configuration files)
also refuses a mapping that repeats a key: PyYAML keeps the last without a word, so a
second `watch:` block silently undid the first.
"""

from __future__ import annotations

from typing import Any

import yaml

# libyaml's safe loader when PyYAML was built with it: ~7x faster on large front matter.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


class DuplicateKey(yaml.YAMLError):
    """A mapping names one key twice; `key` and both 1-based lines say where."""

    def __init__(self, key: object, first: int, second: int) -> None:
        where = f"line {first}" if first == second else f"lines {first} and {second}"
        super().__init__(f"`{key}` is given twice, on {where}")
        self.key, self.first, self.second = key, first, second


class SafeLoader(_BASE):  # type: ignore[misc]
    """The safe loader, with a value it cannot build reported as a YAML error at its line."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """The value of `node`; a ConstructorError where PyYAML raised Python's own."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            value = node.value if isinstance(node.value, str) else ""
            shown = f" {value[:40]!r}{'…' if len(value) > 40 else ''}" if value else ""
            why = str(exc).split(";")[0] or type(exc).__name__
            problem = f"cannot read the value{shown} as {node.tag.rsplit(':', 1)[-1]} ({why})"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from exc


class StrictLoader(SafeLoader):
    """The safe loader, refusing a mapping that repeats a key (DuplicateKey)."""


def _mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    lines: dict[object, int] = {}
    for key_node, _ in node.value:
        # `<<: *defaults` merges keys that the mapping may then override: not a repeat.
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            if key in lines:
                raise DuplicateKey(key, lines[key], line)
            lines[key] = line
        except TypeError:
            continue  # unhashable: the constructor below says so
    return dict(loader.construct_mapping(node, deep=deep))


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(text: str, *, strict: bool = False) -> Any:
    """The data of one YAML document; raises yaml.YAMLError (DuplicateKey when `strict`)."""
    return yaml.load(text, Loader=StrictLoader if strict else SafeLoader)
