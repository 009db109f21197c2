"""Helpers shared by the CLI commands: locating the repository, JSON output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from nexusd.config import Config, load_config
from nexusd.paths import RepoLayout, find_repo


def repo_option(func: Any) -> Any:
    """Add `-C/--repo PATH` (default: the current directory)."""
    return click.option(
        "-C",
        "--repo",
        "repo",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Run as if nexusd was started in this directory.",
    )(func)


def open_repo(repo: Path | None) -> tuple[RepoLayout, Config]:
    """Find the repository and load its configuration (raises GitError / ConfigError)."""
    layout = find_repo(repo)
    return layout, load_config(layout.root)


def echo_json(data: Any) -> None:
    """Print `data` as stable, indented JSON."""
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str, ensure_ascii=False))
