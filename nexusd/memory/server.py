"""A local search server: JSON lines over a unix socket, answered by a running MemoryService.

Each request is one JSON object on one line; each answer is one line:
- `{"op": "ping"}` → `{"ok": true, "model": …, "status": …}`
- `{"op": "search", "query": …, "k": …, "mode": …, "category": …, "path_glob": …,
  "since": …, "until": …}` → `{"ok": true, "results": SearchResults.to_dict()}`
- `{"op": "search_many", "queries": [{"query": …, "k": …}, …], "mode": …}` →
  `{"ok": true, "results": [SearchResults.to_dict(), …]}` (one embedding batch)
- `{"op": "sync", "paths": [...]}` → `{"ok": true, "report": {...}}`
- `{"op": "stats"}` → `{"ok": true, "stats": MemoryStats.to_dict()}`
- `{"op": "get", "id": …}` → `{"ok": true, "chunk": {…} | null}`
Errors answer `{"ok": false, "error": "…"}`. The socket is only reachable by
the user (mode 0600). Other parts of the daemon answer their own ops on the same socket
through `extra` (the code index's `code_*` ops): memory does not import them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socketserver
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from nexusd.errors import DaemonError, NexusError
from nexusd.memory.client import listening
from nexusd.memory.service import MemoryService
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.memory")
SERVER_THREAD = "nexusd-memory-server"
MAX_LINE = 1_048_576
SEARCH_KEYS = (
    "k",
    "mode",
    "category",
    "path_glob",
    "since",
    "until",
    "categories",
    "hidden_categories",
)
# Answers the ops it knows, None for the rest (which the memory service answers).
ExtraOps = Callable[[dict[str, Any]], dict[str, Any] | None]


def handle_request(service: MemoryService, request: Any) -> dict[str, Any]:
    """Answer one decoded request (pure dispatch over the service)."""
    if not isinstance(request, dict):
        return {"ok": False, "error": "a request is a JSON object"}
    op = request.get("op")
    try:
        if op == "ping":
            return {"ok": True, **service.describe()}
        if op == "search":
            query = request.get("query")
            if not isinstance(query, str):
                return {"ok": False, "error": "search needs a string `query`"}
            kwargs = {k: request[k] for k in SEARCH_KEYS if request.get(k) is not None}
            return {"ok": True, "results": service.search(query, **kwargs).to_dict()}
        if op == "search_many":
            return _search_many(service, request)
        if op == "stats":
            return {"ok": True, "stats": service.stats().to_dict()}
        if op == "get":
            chunk_id = request.get("id")
            if not isinstance(chunk_id, str) or not chunk_id:
                return {"ok": False, "error": "get needs a string `id`"}
            return {"ok": True, "chunk": service.get(chunk_id)}
        if op == "sync":
            paths = request.get("paths")
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                return {"ok": False, "error": "sync needs `paths`: a list of strings"}
            report = service.sync_paths([Path(p) for p in paths])
            return {"ok": True, "report": asdict(report)}
    except NexusError as exc:
        return {"ok": False, "error": str(exc)}
    except Exception as exc:
        log.exception("memory server request failed")
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {
        "ok": False,
        "error": f"unknown op {op!r}; use ping, search, search_many, stats, sync or get",
    }


def _search_many(service: MemoryService, request: dict[str, Any]) -> dict[str, Any]:
    items = request.get("queries")
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and isinstance(i.get("query"), str) for i in items
    ):
        return {"ok": False, "error": "search_many needs `queries`: a list of {query, k}"}
    queries = [(str(i["query"]), _int_or_none(i.get("k"))) for i in items]
    found = service.search_many(queries, request.get("mode") or None)
    return {"ok": True, "results": [r.to_dict() for r in found]}


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Handler(socketserver.StreamRequestHandler):
    server: _Server
    timeout = 30  # an idle client cannot hold stop() up for longer than this

    def handle(self) -> None:
        for raw in self.rfile:
            if len(raw) > MAX_LINE:
                answer: dict[str, Any] = {"ok": False, "error": "request line too long"}
            else:
                try:
                    answer = self.server.answer(json.loads(raw))
                except json.JSONDecodeError as exc:
                    answer = {"ok": False, "error": f"not JSON: {exc}"}
            self.wfile.write((json.dumps(answer, default=str) + "\n").encode("utf-8"))
            self.wfile.flush()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, path: str, service: MemoryService, extra: ExtraOps | None) -> None:
        self.service = service
        self.extra = extra
        super().__init__(path, _Handler)

    def answer(self, request: Any) -> dict[str, Any]:
        """The extra ops' answer if they know the op, else the memory service's."""
        if self.extra is not None and isinstance(request, dict):
            try:
                answer = self.extra(request)
            except Exception as exc:
                log.exception("search server: extra op failed")
                answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            if answer is not None:
                return answer
        return handle_request(self.service, request)


class SearchServer:
    """Serves one MemoryService on `layout.socket_path` (start/stop, one thread)."""

    def __init__(
        self, layout: RepoLayout, service: MemoryService, extra: ExtraOps | None = None
    ) -> None:
        self.path = layout.socket_path
        self.service = service
        self.extra = extra
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind the socket (replacing a stale one) and serve in a background thread."""
        if len(str(self.path)) > 100:
            raise DaemonError(
                f"socket path too long for a unix socket: {self.path}",
                hint="move the repository to a shorter path",
            )
        if self.path.exists():
            if listening(self.path, timeout=0.5):
                raise DaemonError(
                    f"another memory search server answers on {self.path}",
                    hint="stop the other daemon first (`nexusd stop`)",
                )
            self.path.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        old = os.umask(0o177)
        try:
            self._server = _Server(str(self.path), self.service, self.extra)
        finally:
            os.umask(old)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name=SERVER_THREAD
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, wait for open requests, remove the socket file."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
