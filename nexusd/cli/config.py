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
@repo_option
@click.option("--json", "as_json", is_flag=True, help="Print {key: {value, source}} as JSON.")
def show(repo: Path | None, as_json: bool) -> None:
    """Print every setting, its value and its source (`default` or the file that set it).

    Outside a git repository only the defaults and your user file are shown.
    """
    try:
        root: Path | None = find_repo(repo).root
    except GitError:
        root = None
    cfg: Config = load_config(root)
    rows = [(key, value, source_of(cfg, key)) for key, value in flatten(cfg.data)]
    if as_json:
        echo_json({k: {"value": v, "source": s} for k, v, s in rows})
        return
    where = root / ".nexus" / "config.yaml" if root else "(not in a repository)"
    click.echo(f"# repository file: {where}\n# user file: {user_config_path()}")
    width = max(len(k) for k, _, _ in rows)
    for key, value, source in rows:
        click.echo(f"{key.ljust(width)} = {json.dumps(value, ensure_ascii=False)}  # {source}")
