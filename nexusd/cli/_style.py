"""Colour for people, plain text for pipes: style only a terminal, never with NO_COLOR set."""

from __future__ import annotations

import os
import sys
from typing import Any

import click


def colour_on(err: bool = False) -> bool:
    """True when the stream is a terminal and neither NO_COLOR nor TERM=dumb says otherwise."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False  # https://no-color.org: any non-empty value turns colour off
    stream = sys.stderr if err else sys.stdout
    return stream.isatty()


def paint(text: str, *, err: bool = False, **style: Any) -> str:
    """`text` styled with click.style(**style) when colour is on for that stream."""
    return click.style(text, **style) if colour_on(err) else text


def label(kind: str) -> str:
    """`error:`, `warning:` or `note:` for stderr, coloured by how serious it is."""
    colours = {"error": "red", "warning": "yellow", "note": "cyan"}
    return paint(f"{kind}:", err=True, fg=colours.get(kind), bold=kind == "error")
