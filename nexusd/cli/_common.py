"""Helpers shared by the CLI commands: locating the repository, JSON output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from nexusd.config import Config, load_config
from nexusd.errors import ConfigError
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
    from nexusd.config.cache import load_config_cached

    layout = find_repo(repo)
    return layout, load_config_cached(layout)


def config_problem(layout: RepoLayout) -> ConfigError | None:
    """The configuration's error, or None when it loads (for commands that work without it)."""
    try:
        load_config(layout.root)
    except ConfigError as exc:
        return exc
    return None


def warn_config_problem(error: ConfigError | None) -> None:
    """Tell on stderr that the configuration is invalid, so `start` will refuse it."""
    if error is not None:
        import textwrap

        head = "warning: the configuration is invalid; `nexusd start` fails until it is fixed:"
        click.echo(f"{head}\n{textwrap.indent(str(error), '  ')}", err=True)


def echo_json(data: Any) -> None:
    """Print `data` as stable, indented JSON (UTF-8, whatever the paths in it)."""
    import json  # only here: most commands print text and never pay for it

    text = json.dumps(data, indent=2, sort_keys=True, default=str, ensure_ascii=False)
    click.echo(escape_surrogates(text))


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as a JSON escape (`\\udcff`).

    A file name that is not UTF-8 comes from git or os as such a character (surrogateescape);
    written out, it is either the raw byte (no longer UTF-8, so no longer JSON) or an
    encoding error. Escaped, the JSON stays UTF-8, and `json.loads` gives the same str back
    (`os.fsencode` turns it into the name's bytes)."""
    if text.isascii():
        return text
    import re

    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def local_memory_service(
    layout: RepoLayout, config: Config, *, quiet: bool = False, vector: bool = True
) -> Any:
    """A memory service loaded in this process (model + sync); says what that costs.

    `vector=False` (keyword search) leaves the model alone: no torch import, no load.
    """
    import time

    from nexusd.memory.service import MemoryService

    service = MemoryService(layout, config)
    if not vector:
        started = time.perf_counter()
        service.start(background=False, load_model=False)
        if not quiet:
            took = time.perf_counter() - started
            click.echo(
                f"no daemon running: keyword search, embedding model not loaded; "
                f"synced the index in {took:.1f}s",
                err=True,
            )
        return service
    _load_model(service.embedder, quiet=quiet)
    started = time.perf_counter()
    service.start(background=False)
    if not quiet:
        emb = service.embedder
        state = (
            f"loaded the embedding model in {emb.load_seconds or 0:.1f}s"
            if emb.ready
            else f"embedding model unavailable ({emb.error}); keyword search only"
        )
        took = time.perf_counter() - started
        click.echo(f"no daemon running: {state}; synced the index in {took:.1f}s", err=True)
    return service


def _load_model(embedder: Any, *, quiet: bool) -> None:
    """Load the model now, saying so first (it takes seconds) and counting them on a terminal."""
    import sys
    import time

    if quiet:
        embedder.load()
        return
    click.echo(
        "no daemon running: loading the embedding model (several seconds); "
        "`nexusd start` keeps it loaded so searches answer at once",
        err=True,
    )
    embedder.start_loading()
    if sys.stderr.isatty():
        started = time.monotonic()
        while not embedder.wait(0.25):
            click.echo(f"\r  loading… {time.monotonic() - started:.0f}s", err=True, nl=False)
        click.echo("\r" + " " * 24 + "\r", err=True, nl=False)
    embedder.wait()


class ProgressBar:
    """A `(done, total)` progress callback drawing a bar on stderr once there is work to show."""

    def __init__(self, label: str, *, shown: bool = True, min_total: int = 1) -> None:
        self.label, self.shown, self.min_total = label, shown, min_total
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        """Move the bar to `done` of `total` (it appears at the first call with enough work)."""
        if self._bar is None and self.shown and total >= self.min_total:
            self._bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self._bar.__enter__()
        if self._bar is not None:
            self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        """End the bar's line, if one was drawn."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
