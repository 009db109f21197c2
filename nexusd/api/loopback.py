"""The daemon's loopback HTTP server: uvicorn serving `nexusd.api.http` in one thread.

A daemon service (start/stop). It serves only when `api.enabled` is true, on `api.host`
(loopback only: the configuration refuses anything else) and `api.port`. It uses the
daemon's own memory service and code ops (no socket round trip). A port already taken
fails open: the daemon keeps answering requests and its log says why the API is off.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from nexusd.api.backend import Backend, CodeOps
from nexusd.api.daemon_side import DaemonSide
from nexusd.config import Config
from nexusd.errors import DaemonError
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.api")
THREAD = "nexusd-api"
START_SECONDS = 20.0
STOP_SECONDS = 10.0


class LoopbackServer:
    """Serves the context API and `/mcp` for one daemon run."""

    name = "api"

    def __init__(
        self,
        layout: RepoLayout,
        config: Config,
        *,
        memory: Any = None,
        code_ops: CodeOps | None = None,
        stats: Any = None,
        daemon: DaemonSide,
    ) -> None:
        self.layout = layout
        self.stats = stats  # the daemon's DaemonStats: `nexusd status` shows the API
        self.config = config
        self.host = config.api.host
        self.port = config.api.port
        self.backend = Backend(
            layout, config, memory=memory, code_ops=code_ops, use_socket=False, daemon=daemon
        )
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    @property
    def url(self) -> str:
        """Where it serves, e.g. http://127.0.0.1:7319."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        """Bind and serve in a background thread; return once it accepts connections."""
        import uvicorn

        from nexusd.api.bearer import TokenStore
        from nexusd.api.context import Context
        from nexusd.api.http import build_app

        app = build_app(
            Context(self.layout, self.config, self.backend),
            TokenStore(self.layout),
            host=self.host,
            max_body_bytes=self.config.api.max_body_bytes,
        )
        config = uvicorn.Config(
            app, host=self.host, port=self.port, log_config=None, access_log=False, lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name=THREAD, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.error = (
                    f"the API could not listen on {self.url} (port in use?); "
                    "set another api.port or stop what uses it"
                )
                log.error("%s", self.error)
                self.stop()
                self._publish("failed")
                return
            time.sleep(0.02)
        log.info("context API and /mcp listening on %s", self.url)
        self._publish("listening")

    def _publish(self, state: str) -> None:
        if self.stats is not None:
            self.stats.set(api={"state": state, "url": self.url, "error": self.error})

    def _serve(self) -> None:
        try:
            self._server.run()
        except SystemExit:  # uvicorn exits when it cannot bind
            pass
        except Exception:
            log.exception("the API server stopped")

    def stop(self) -> None:
        """Stop accepting, finish open requests (briefly), join the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_SECONDS)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(STOP_SECONDS)
            if self._thread.is_alive():
                raise DaemonError("the API server did not stop", hint="kill the daemon")
        if self._server is not None:
            # What `nexusd status` shows once the daemon is gone: not the last "listening".
            self._publish("stopped")
        self._server = self._thread = None
