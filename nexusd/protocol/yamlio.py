"""YAML front matter in and out: safe loading only, readable and deterministic dumping."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from nexusd.yamlload import load

FENCE = "---"
CLOSERS = ("---", "...")


class _ReadableDumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line strings as `|` blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _represent_str)


def load_yaml(text: str, *, strict: bool = False) -> Any:
    """Safe-load YAML (plain data only); raises yaml.YAMLError (DuplicateKey when `strict`)."""
    return load(text, strict=strict)


def dump_yaml(data: Any) -> str:
    """YAML for humans: key order kept, unicode kept, block style, multi-line strings as `|`."""
    return yaml.dump(
        data,
        Dumper=_ReadableDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def normalize_text(text: str) -> str:
    """Drop a UTF-8 BOM and turn CRLF / CR line endings into LF."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class FrontMatter:
    """The raw YAML text of a front matter block, the body after it, and where they start."""

    yaml_text: str
    body: str
    yaml_first_line: int  # 1-based line number of the first YAML line
    body_first_line: int  # 1-based line number of the first body line


def split_front_matter(text: str) -> FrontMatter | None:
    """Split `---\\n<yaml>\\n---\\n<body>`; None when the text does not open with `---`.

    Raises ValueError when the opening fence is not closed.
    """
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != FENCE:
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in CLOSERS:
            return FrontMatter(
                yaml_text="\n".join(lines[1:index]),
                body="\n".join(lines[index + 1 :]),
                yaml_first_line=2,
                body_first_line=index + 2,
            )
    raise ValueError("front matter opened with `---` on line 1 is never closed")
