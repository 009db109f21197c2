"""Where the API's memory and code answers come from: the running daemon, or this process.

`nexusd mcp` asks the daemon over its unix socket when one runs (the model and the
indexes stay loaded there), the way `nexusd memory search` and `nexusd code search`
do; when none runs, or it dies mid-call, it opens the memory service and the code
index here, once, and keeps them. Inside the daemon the HTTP server hands over the
daemon's own memory service and code ops, and no socket is involved.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nexusd.api.daemon_side import DaemonSide
from nexusd.config import Config
from nexusd.errors import ConfigError, IndexStoreError
from nexusd.memory.client import ask
from nexusd.memory.search import SearchResults
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.api")
CodeOps = Callable[[dict[str, Any]], dict[str, Any] | None]
SOCKET_TIMEOUT = 60.0


class Backend:
    """Memory search/get/sync and the code ops, by the daemon or in this process."""

    def __init__(
        self,
        layout: RepoLayout,
        config: Config,
        *,
        memory: Any = None,
        code_ops: CodeOps | None = None,
        use_socket: bool = True,
        daemon: DaemonSide,
    ) -> None:
        self.layout = layout
        self.daemon = daemon
        self.config = config
        self.use_socket = use_socket
        self._memory = memory
        self._owns_memory = False
        self._code_ops = code_ops
        self._code_index: Any = None
        self._lock = threading.Lock()

    # -- memory ----------------------------------------------------------------------
    def _ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        if not self.use_socket:
            return None
        try:
            return ask(self.layout.socket_path, request, timeout=SOCKET_TIMEOUT)
        except (OSError, ValueError) as exc:
            # The daemon died mid-call (reset, broken pipe, a cut-off answer): answer here.
            log.warning("the daemon did not answer (%s); answering in this process", exc)
            return None

    def memory(self) -> Any:
        """The memory service of this process (opened, synced and its model loaded once)."""
        if not self.config.memory.enabled:
            raise ConfigError(
                "memory is disabled (memory.enabled is false)",
                hint=f"set `memory: {{enabled: true}}` in {self.layout.config_file}",
            )
        with self._lock:
            if self._memory is None:
                from nexusd.memory.service import MemoryService

                log.info("no daemon answers: opening the memory index in this process")
                service = MemoryService(self.layout, self.config)
                service.embedder.load()
                service.start(background=False)
                self._memory, self._owns_memory = service, True
            return self._memory

    def require_memory(self) -> None:
        """ConfigError when memory is disabled, IndexStoreError when the daemon refuses;
        opens the memory here when no daemon answers. Called before anything is written."""
        if not self.config.memory.enabled:
            self.memory()  # raises the ConfigError with its fix
        if self._ask({"op": "ping"}) is None:
            self.memory()

    def search(self, query: str, **options: Any) -> SearchResults:
        """Memory search (see MemoryService.search for the options)."""
        opts = {k: v for k, v in options.items() if v is not None}
        answer = self._ask({"op": "search", "query": query, **opts})
        if answer is not None:
            return SearchResults.from_dict(answer["results"])
        result: SearchResults = self.memory().search(query, **opts)
        return result

    def get(self, chunk_id: str) -> dict[str, Any] | None:
        """One chunk by id, or None."""
        answer = self._ask({"op": "get", "id": chunk_id})
        if answer is not None:
            chunk: dict[str, Any] | None = answer["chunk"]
            return chunk
        found: dict[str, Any] | None = self.memory().get(chunk_id)
        return found

    def sync(self, paths: Sequence[Path]) -> None:
        """Index the memory files just written."""
        if self._ask({"op": "sync", "paths": [str(p) for p in paths]}) is None:
            self.memory().sync_paths(paths)

    # -- code ------------------------------------------------------------------------
    def code(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer of one `code_*` op; IndexStoreError when it is refused."""
        if not self.config.code.enabled:
            raise ConfigError(
                "the code index is disabled (code.enabled is false)",
                hint=f"set `code: {{enabled: true}}` in {self.layout.config_file}",
            )
        answer = self._code_ops(request) if self._code_ops is not None else self._ask(request)
        if answer is None:
            answer = self._code_here(request)
        if answer is None or not answer.get("ok"):
            raise IndexStoreError(str((answer or {}).get("error") or "no answer"))
        return answer

    def _code_here(self, request: dict[str, Any]) -> dict[str, Any] | None:
        from nexusd.code.ops import handle_code_op
        from nexusd.code.service import CodeIndex

        with self._lock:
            if self._code_index is None:
                self._code_index = CodeIndex(self.layout, self.config)
                self._code_index.open()
            index = self._code_index
            # A daemon without a socket keeps the index: read it as stored, never write.
            # Otherwise every read first takes in what changed (an agent edits, then reads):
            # an update that finds nothing new costs ~25 ms on sympy's 2,000 files.
            if self.daemon.running_pid(self.layout) is None:
                index.update()
            return handle_code_op(index, request, extra=lambda: {"daemon": False})

    def code_here_summary(self) -> dict[str, Any]:
        """The code index as this process holds it (for `status` without a daemon)."""
        from nexusd.code.ops import status_of, status_summary

        with self._lock:
            index = self._code_index
            if index is None:
                return {
                    "state": "not open in this process: the first code tool call builds it",
                    "daemon": False,
                }
            return {**status_summary(status_of(index)), "state": "ready", "daemon": False}

    def close(self) -> None:
        """Stop what this process opened."""
        if self._owns_memory and self._memory is not None:
            self._memory.stop()
            self._memory = None
