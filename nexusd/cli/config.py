"""`nexusd config show`: the merged configuration and where each value came from."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from nexusd.cli._common import echo_json, repo_option
from nexusd.cli._group import group
from nexusd.config import Config, load_config, user_config_path
from nexusd.errors import GitError
from nexusd.paths import find_repo


@group("config")
def config() -> None:
    """Inspect nexusd's configuration.

    \b
    Layers, later ones win:
      built-in defaults
      $XDG_CONFIG_HOME/nexusd/config.yaml   (your settings for every repository)
      <repo>/.nexus/config.yaml             (this repository; `nexusd init` writes it)

    Change a setting by editing one of the files; a running daemon applies a valid
    edit on its own. An unknown key or a wrong value is an error naming the file
    and the key.

    \b
    Examples:
      nexusd config show
      nexusd config show sandbox            # one section
      nexusd config show watch.debounce_ms --json
    """


def flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) for each leaf; lists and empty mappings are leaves."""
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from flatten(value, f"{dotted}.")
        else:
            yield dotted, value


def source_of(cfg: Config, dotted: str) -> str:
    """The source of a key, or of the nearest enclosing key set as a whole (`providers`)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        source = cfg.sources.get(".".join(parts[:end]))
        if source is not None:
            return source
    return "default"


@config.command("show")
@click.argument("key", required=False)
@repo_option
@click.option("--json", "as_json", is_flag=True, help="Print {key: {value, source}} as JSON.")
def show(key: str | None, repo: Path | None, as_json: bool) -> None:
    """Print every setting (or those under KEY), its value and its source.

    The source is `default` or the file that set it. KEY is a dotted key such as
    `memory.search.k`, or a section such as `memory`. Outside a git repository only
    the defaults and your user file are shown.

    \b
    Examples:
      nexusd config show
      nexusd config show memory.search --json
    """
    try:
        root: Path | None = find_repo(repo).root
    except GitError:
        root = None
    cfg: Config = load_config(root)
    rows = [(k, value, source_of(cfg, k)) for k, value in flatten(cfg.data)]
    if key is not None:
        rows = _under(rows, key)
    if as_json:
        echo_json({k: {"value": v, "source": s} for k, v, s in rows})
        return
    where = root / ".nexus" / "config.yaml" if root else "(not in a repository)"
    click.echo(f"# repository file: {where}\n# user file: {user_config_path()}")
    width = max(len(k) for k, _, _ in rows)
    for k, value, source in rows:
        click.echo(f"{k.ljust(width)} = {json.dumps(value, ensure_ascii=False)}  # {source}")


def _under(rows: list[tuple[str, Any, str]], key: str) -> list[tuple[str, Any, str]]:
    """The rows of `key` itself or of the keys below it; an unknown key is a usage error
    that names the closest known ones."""
    import difflib

    key = key.strip().strip(".")
    picked = [row for row in rows if row[0] == key or row[0].startswith(f"{key}.")]
    if picked:
        return picked
    names = sorted({p for k, _, _ in rows for p in _prefixes(k)})
    near = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise click.BadParameter(
        f"no setting {key!r}{hint} (`nexusd config show` lists every key)", param_hint="KEY"
    )


def _prefixes(dotted: str) -> Iterator[str]:
    parts = dotted.split(".")
    for end in range(1, len(parts) + 1):
        yield ".".join(parts[:end])
