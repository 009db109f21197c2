"""A scripted HTTP server of our own on 127.0.0.1: it fails, stalls, trickles, lies or answers.

Behaviours a provider must survive within its time box: `hang_s` stalls before the first
byte (no status line), `trickle_s` sends the answer one byte every `trickle_s` seconds
(a server that is alive but too slow), a str body is garbage when it is not JSON.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: status, body (dict → JSON, str → raw text), a stall first, and
    how slowly the body goes out (`trickle_s` seconds per byte; 0 = all at once)."""

    status: int = 200
    body: Any = None
    hang_s: float = 0.0
    trickle_s: float = 0.0


def chat_payload(
    content: str, *, model: str = "test-model", tokens: tuple[int, int] = (11, 7)
) -> dict[str, Any]:
    """A valid OpenAI-compatible chat completion carrying `content`."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_763_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens[0],
            "completion_tokens": tokens[1],
            "total_tokens": sum(tokens),
        },
    }


class Loopback:
    """Serve `replies` in order (the last one repeats); record every request's path and body."""

    def __init__(self, replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply]) -> None:
        self._replies = replies
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                reply = outer._next(self.path, body, dict(self.headers))
                if reply.hang_s and outer._release.wait(reply.hang_s):
                    return
                data = (
                    reply.body.encode("utf-8")
                    if isinstance(reply.body, str)
                    else json.dumps(reply.body).encode("utf-8")
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if not reply.trickle_s:
                        self.wfile.write(data)
                        return
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        if outer._release.wait(reply.trickle_s):
                            return
                except OSError:
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = False
        self.server.block_on_close = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="loopback-http")

    def _next(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append((path, body, headers))
            if callable(self._replies):
                return self._replies(body)
            index = min(len(self.requests) - 1, len(self._replies) - 1)
            return self._replies[index]

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:PORT."""
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Loopback:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
