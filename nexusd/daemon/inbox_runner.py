"""Runs the git-hook inbox drain (`nexusd.daemon.inbox.drain_and_handle`) on its own thread.

Kicked at start, when a file appears in `<nexus>/inbox/`, and on every rescan.
The drain is fail-open: an error is logged, and the daemon carries on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from nexusd.config import Config
from nexusd.daemon.inbox import Handler, drain_and_handle
from nexusd.daemon.logs import log_event
from nexusd.paths import RepoLayout


class InboxRunner:
    """One thread calling the inbox drain whenever it is kicked (kicks coalesce)."""

    name = "inbox"

    def __init__(
        self,
        layout: RepoLayout,
        config: Config,
        logger: logging.Logger,
        *,
        settle: float,
        handlers: Mapping[str, Handler],
    ) -> None:
        self.layout = layout
        self.config = config
        self.logger = logger
        self.settle = settle
        self.handlers = handlers  # hook -> handler, this daemon run's own table
        self._kick = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def kick(self) -> None:
        """Ask for a drain soon (cheap; safe from any thread)."""
        self._kick.set()

    def start(self) -> None:
        """Start the drain thread."""
        self._thread = threading.Thread(target=self._run, name="nexusd-inbox", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the drain in progress, if any."""
        self._stop.set()
        self._kick.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            self._kick.wait(1.0)
            if self._stop.is_set() or not self._kick.is_set():
                continue
            # Let a burst of hook events land before draining them together.
            self._stop.wait(self.settle)
            self._kick.clear()
            self.drain()

    def drain(self) -> int:
        """Handle queued hook events now; returns how many (0 when the drain failed)."""
        try:
            handled = drain_and_handle(self.layout, self.config, self.handlers)
        except Exception:
            log_event(self.logger, logging.ERROR, "inbox drain failed", exc_info=True)
            return 0
        if handled:
            log_event(self.logger, logging.INFO, "inbox events handled", count=handled)
        return handled
