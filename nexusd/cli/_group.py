"""The click group every `nexusd` command group uses: a mistyped command gets a suggestion."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import click


def suggestions(name: str, known: list[str]) -> list[str]:
    """Known names close to `name`: those it starts, then near misses (`strat` -> `start`)."""
    prefixed = [k for k in known if len(name) >= 2 and k.startswith(name)]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    return list(dict.fromkeys(prefixed + close))[:3]


class SuggestingGroup(click.Group):
    """A click group that answers an unknown command with the closest ones it has.

    Click suggests options on its own; commands only from 8.4 on and never for a group
    whose commands are listed lazily, as the top-level `nexusd` group is.
    """

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Resolve as click does; an unknown name fails with 'Did you mean …?'."""
        name = args[0] if args else ""
        if (
            ctx.resilient_parsing
            or not name
            or not name[:1].isalnum()  # an option: click says which one is unknown
            or self.get_command(ctx, name) is not None
        ):
            return super().resolve_command(ctx, args)
        near = suggestions(name, self.list_commands(ctx))
        message = f"No such command {name!r}."
        if len(near) == 1:
            message += f" Did you mean {near[0]!r}?"
        elif near:
            message += " Did you mean one of: " + ", ".join(repr(n) for n in near) + "?"
        ctx.fail(message)


def group(name: str | None = None, **attrs: Any) -> Callable[[Callable[..., Any]], SuggestingGroup]:
    """`@click.group(...)` with suggestions for mistyped subcommands."""
    return click.group(name, cls=SuggestingGroup, **attrs)
