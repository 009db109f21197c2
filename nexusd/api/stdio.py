"""`nexusd mcp`'s stdio transport: every request answered, and no check outliving the server.

Two gaps of the SDK's stdio server, closed here:

- A line it cannot read (broken JSON; a lone surrogate such as `\\ud800`, which a
  JavaScript client writes for half an emoji; valid JSON that is no JSON-RPC message) was
  dropped without a word, so the client waited for an answer forever. Now a request gets
  a JSON-RPC error under its own id (`null` when none can be read, as JSON-RPC says), and
  the line is logged on stderr.
- A client that leaves mid-call ends the server (SIGTERM to its process group), but a check
  runs in its own session, out of that group, and went on without its time limit. SIGTERM
  now ends the server in order, and the process groups its children lead go with it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from nexusd.processes import kill_group

log = logging.getLogger("nexusd.api")
EXIT_TERMINATED = 128 + signal.SIGTERM
FIX = "send one JSON-RPC 2.0 message per line, as UTF-8 JSON text"


def run(server: MCPServer[Any]) -> None:
    """Serve `server` over stdio until the client closes it or sends SIGTERM."""
    import anyio

    def stop(signum: int, frame: FrameType | None) -> None:
        """End the checks, then the process: a clean exit would wait for the thread that
        reads stdin, blocked for as long as the client keeps the pipe open."""
        end_child_groups()
        sys.stderr.flush()
        os._exit(EXIT_TERMINATED)

    main = threading.current_thread() is threading.main_thread()  # signals: main thread only
    previous = signal.signal(signal.SIGTERM, stop) if main else None
    try:
        anyio.run(_serve, server)
    finally:
        if main:  # the process is the server's (stdio is the process's): its children too
            end_child_groups()
            signal.signal(signal.SIGTERM, previous)


async def _serve(server: MCPServer[Any]) -> None:
    # What MCPServer.run_stdio_async does (through the same private attribute), with the
    # read stream guarded.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        guarded = AnsweringReadStream(read_stream, write_stream)
        await lowlevel.run(guarded, write_stream, lowlevel.create_initialization_options())


class AnsweringReadStream:
    """The stdio read stream, answering the lines the SDK could not read as messages."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the SDK's dispatcher reads it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        """The next message; an unreadable line is answered (when it can be) and skipped."""
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = unreadable_reply(item)
            if reply is not None:
                await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def unreadable_reply(exc: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error answering the line `exc` says could not be read, or None when it
    was no request (a notification or a response: nothing is waiting for an answer)."""
    errors = _errors(exc)
    raw = next((e.get("input") for e in errors if e.get("type") == "json_invalid"), None)
    code, why = types.PARSE_ERROR, "it is not JSON"
    message: Any = None
    if isinstance(raw, str):
        try:
            message = json.loads(raw)  # Python's reader takes a lone surrogate; pydantic's not
        except (ValueError, RecursionError):
            message = None
        else:
            where = _lone_surrogate(message)
            why = (
                f"it holds a lone surrogate ({where}), which is not UTF-8 text: half of a"
                " character such as an emoji"
                if where
                else "it is not JSON the server can read"
            )
    else:  # JSON, but not a JSON-RPC message
        code, why = types.INVALID_REQUEST, "it is not a JSON-RPC 2.0 message"
        inputs = [e.get("input") for e in sorted(errors, key=lambda e: len(e.get("loc", ())))]
        message = next((i for i in inputs if isinstance(i, dict)), inputs[0] if inputs else None)
    shown = (raw if isinstance(raw, str) else repr(message))[:200]
    log.warning("unreadable message from the client (%s): %r", why, shown)
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(message, dict) and (
        "result" in message or "error" in message or ("method" in message and "id" not in message)
    ):
        return None  # a response or a notification: no one waits for an answer
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    text = f"the server could not read this message: {why}; {FIX}"
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=text)
    )


def _errors(exc: Exception) -> list[dict[str, Any]]:
    try:
        found = exc.errors()  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return []
    return [dict(e) for e in found] if isinstance(found, list) else []


def _lone_surrogate(value: Any) -> str:
    """Where in a decoded JSON value a lone surrogate is (`\\ud800 in params.arguments.text`),
    or ""."""
    todo: list[tuple[str, Any]] = [("", value)]
    while todo:
        where, item = todo.pop()
        if isinstance(item, dict):
            todo.extend((f"{where}.{k}" if where else str(k), v) for k, v in item.items())
            todo.extend((f"{where} (a key)", k) for k in item if isinstance(k, str))
        elif isinstance(item, list):
            todo.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
        elif isinstance(item, str):
            bad = next((c for c in item if 0xD800 <= ord(c) <= 0xDFFF), None)
            if bad is not None:
                return f"\\u{ord(bad):04x} in {where or 'the message'}"
    return ""


def end_child_groups() -> None:
    """SIGKILL the process groups this process's children lead: a check starts in its own
    session (out of the group the client ends), and must not outlive the server."""
    me = os.getpid()
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return  # no /proc (macOS): a check's own time limit ends it, as before
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text(encoding="utf-8", errors="replace")
            fields = stat.rsplit(")", 1)[1].split()
            ppid, pgid = int(fields[1]), int(fields[2])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and pgid == int(entry.name):
            kill_group(pgid)
