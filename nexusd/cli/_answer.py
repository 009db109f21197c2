"""Getting a request answered from the CLI: `nexusd.daemon.waiting` with the foreground
services of `nexusd plan` and its notes on stderr.

`nexusd request new --wait` uses it. With a daemon that watches the request's folder it
waits for the daemon's response; without one (or when the daemon stops meanwhile) it
answers here, however long that takes.
"""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.config import Config
from nexusd.daemon.waiting import Answer
from nexusd.daemon.waiting import wait_for_answer as _wait
from nexusd.paths import RepoLayout


def wait_for_answer(layout: RepoLayout, config: Config, request: Path, *, timeout: float) -> Answer:
    """Wait for the daemon's response to `request`, or answer it here when no daemon will."""
    from nexusd.cli.plan import foreground_services

    return _wait(
        layout,
        config,
        request,
        timeout=timeout,
        services=lambda: foreground_services(layout, config, memory=True),
        announce=lambda text: click.echo(text, err=True),
    )
