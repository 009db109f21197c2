"""Configuration reload: a running daemon follows edits to its configuration files.

The main loop polls `ConfigWatch` once a second (a stat of two files; the bytes are
hashed only when the stat changed). A new configuration is validated first: an
invalid one is logged with every problem and published as `config_error` in the
status, and the daemon keeps the configuration it runs with. A valid, different
one restarts the daemon's services in this process with it (the request in flight
is finished first; the lock and pid stay, the loaded embedding model is reused),
which applies every key the same way a restart would.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

from nexusd.config import Config, load_config, user_config_path
from nexusd.daemon.debounce import FileKey, file_key
from nexusd.daemon.logs import log_event
from nexusd.daemon.runtime import Daemon
from nexusd.daemon.status import DaemonStats, utc_now
from nexusd.errors import ConfigError
from nexusd.paths import RepoLayout

Build = Callable[[Config], Daemon]


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class ConfigWatch:
    """Notices when the user or repository configuration file changed, by content."""

    def __init__(self, layout: RepoLayout) -> None:
        self.layout = layout
        self.files = [user_config_path(), layout.config_file]
        self._keys: list[FileKey | None] = [file_key(p) for p in self.files]
        self._digests: list[str | None] = [_digest(p) for p in self.files]

    def poll(self) -> Config | ConfigError | None:
        """The configuration loaded anew, or its error, when a file's bytes changed; else None."""
        keys = [file_key(p) for p in self.files]
        if keys == self._keys:
            return None
        self._keys = keys
        digests = [_digest(p) for p in self.files]
        if digests == self._digests:
            return None  # touched or re-saved unchanged
        self._digests = digests
        try:
            return load_config(self.layout.root)
        except ConfigError as exc:
            return exc


def follow_config(
    watch: ConfigWatch, daemon: Daemon, build: Build, stats: DaemonStats, logger: logging.Logger
) -> Daemon:
    """One poll: keep `daemon`, or stop it and return one started with the new configuration."""
    change = watch.poll()
    if change is None:
        return daemon
    if isinstance(change, ConfigError):
        log_event(
            logger,
            logging.ERROR,
            "configuration invalid; still running with the previous one",
            error=str(change),
        )
        stats.set(config_error=str(change))
        return daemon
    previous = daemon.ctx.config
    if change.data == previous.data:
        stats.set(config_error=None)  # fixed back, or only comments changed
        return daemon
    log_event(logger, logging.INFO, "configuration changed; restarting the services with it")
    daemon.stop()
    fresh: Daemon | None = None
    try:
        fresh = build(change)
        fresh.start()
    except Exception as exc:
        # Valid but unusable (a service that fails to start with it): back to what worked,
        # and say so in the log and in `nexusd status`.
        if fresh is not None:
            fresh.stop()
        message = f"the new configuration could not be applied: {type(exc).__name__}: {exc}"
        log_event(logger, logging.ERROR, message, exc_info=True)
        fresh = build(previous)
        fresh.start()
        stats.set(config_error=f"{message}; fix it, or restart the daemon")
        return fresh
    stats.set(config_error=None, stopped_at=None, config_reloaded_at=utc_now())
    log_event(logger, logging.INFO, "configuration reloaded")
    return fresh
