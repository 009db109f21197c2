"""YAML for configuration files: plain data only, and a key given twice is an error.

PyYAML keeps the last of two equal keys without a word, so a second `watch:` block (one
added at the top of the file `nexusd init` wrote, which has its own `watch:` further
down) silently undid the first. Imported only when a file is read (yaml costs ~20 ms).
"""

from __future__ import annotations

from typing import Any

import yaml

# libyaml when present: the pure-Python loader took ~10 ms per command on the default
# file; both build plain data only.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


class DuplicateKey(ValueError):
    """A mapping names one key twice; `key` and both 1-based lines say where."""

    def __init__(self, key: object, first: int, second: int) -> None:
        where = f"line {first}" if first == second else f"lines {first} and {second}"
        super().__init__(f"`{key}` is given twice, on {where}")
        self.key, self.first, self.second = key, first, second


class _StrictLoader(_BASE):  # type: ignore[misc]
    """The safe loader, refusing a mapping that repeats a key."""


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


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(text: str) -> Any:
    """The data of one YAML document; raises yaml.YAMLError or DuplicateKey."""
    return yaml.load(text, Loader=_StrictLoader)  # a safe loader: plain data only
