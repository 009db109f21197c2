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

import contextlib
import hashlib
import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

from nexusd.config import Config, load_config, user_config_path
from nexusd.daemon.debounce import FileKey, file_key
from nexusd.daemon.logs import log_event
from nexusd.daemon.runtime import Daemon
from nexusd.daemon.status import DaemonStats, utc_now, write_status
from nexusd.errors import ConfigError
from nexusd.paths import RepoLayout

Build = Callable[[Config], Daemon]


def _digest(path: Path) -> str | None:
    """sha256 of the file's bytes; None when it is missing, else why it cannot be read."""
    try:
        # Non-blocking: a configuration linked to a FIFO must not stall the main loop.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        # Unreadable is not missing: it is a change, and the load that follows reports it.
        return f"unreadable: {exc.errno}"
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return "not a regular file"
        try:
            return hashlib.sha256(fh.read()).hexdigest()
        except OSError as exc:
            return f"unreadable: {exc.errno}"


class ConfigWatch:
    """Notices when the user or repository configuration file changed, by content."""

    def __init__(self, layout: RepoLayout) -> None:
        self.layout = layout
        self.files = [user_config_path(), layout.config_file]
        # Not seeded from the files: they may have changed since the configuration the daemon
        # runs with was loaded (before the lock, logging and imports). The first poll loads
        # them, and `follow_config` compares the result with the configuration in use.
        self._keys: list[FileKey | None] | None = None
        self._digests: list[str | None] | None = None

    def poll(self) -> Config | ConfigError | None:
        """The configuration loaded anew, or its error, on the first poll and whenever a file's
        bytes changed since the last one; else None."""
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
        except Exception as exc:
            # Whatever went wrong reading the files, the running daemon must not end over it.
            return ConfigError(
                f"the configuration could not be loaded: {type(exc).__name__}: {exc}",
                hint="fix the configuration files (`nexusd logs` has the details)",
            )


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
    if change.data == previous.data and daemon.running:
        stats.set(config_error=None)  # fixed back, or only comments changed
        return daemon
    log_event(logger, logging.INFO, "configuration changed; restarting the services with it")
    stats.set(reloading=utc_now())
    daemon.stop(reloading=True)
    fresh: Daemon | None = None
    try:
        fresh = build(change)
        fresh.start()
    except Exception as exc:
        # Valid but unusable (a service that fails to start with it): back to what worked,
        # and say so in the log and in `nexusd status`.
        if fresh is not None:
            fresh.stop(reloading=True)
        message = f"the new configuration could not be applied: {type(exc).__name__}: {exc}"
        log_event(logger, logging.ERROR, message, exc_info=True)
        return _fall_back(daemon, build, stats, logger, message)
    stats.set(config_error=None, reloading=None, stopped_at=None, config_reloaded_at=utc_now())
    log_event(logger, logging.INFO, "configuration reloaded")
    return fresh


def _fall_back(
    stopped: Daemon, build: Build, stats: DaemonStats, logger: logging.Logger, message: str
) -> Daemon:
    """The daemon started again with the configuration it ran with, or `stopped` if that fails."""
    fallback: Daemon | None = None
    try:
        fallback = build(stopped.ctx.config)
        fallback.start()
    except Exception as exc:
        if fallback is not None:
            fallback.stop(reloading=True)
        # The process stays (it holds the lock and follows the files): the next change to
        # the configuration is tried, even one back to what it ran with.
        problem = (
            f"{message}; starting again with the previous configuration failed too "
            f"({type(exc).__name__}: {exc}): no request is answered until the configuration "
            "is fixed or the daemon restarted"
        )
        log_event(logger, logging.ERROR, problem, exc_info=True)
        stats.set(config_error=problem, reloading=None, state="stopped", stopped_at=utc_now())
        # Its status writer stopped with it: publish this one here.
        with contextlib.suppress(OSError):
            write_status(stopped.ctx.layout.state_dir, stats)
        return stopped
    stats.set(
        config_error=f"{message}; fix it, or restart the daemon", reloading=None, stopped_at=None
    )
    return fallback
