"""Client of the memory search server: one JSON line out, one back; None when none runs."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from nexusd.errors import IndexStoreError


def _connect(socket_path: Path, timeout: float) -> socket.socket | None:
    """A connected socket to the server at `socket_path`, or None when none accepts there."""
    if not socket_path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(socket_path))
    except OSError:
        sock.close()
        return None
    return sock


def listening(socket_path: Path, timeout: float = 1.0) -> bool:
    """Whether a server accepts connections at `socket_path` (a daemon killed with -9 leaves
    the socket file behind, and nothing listens there)."""
    sock = _connect(socket_path, timeout)
    if sock is None:
        return False
    sock.close()
    return True


def ask(socket_path: Path, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any] | None:
    """Send one request to the server at `socket_path`; None when no server listens there."""
    sock = _connect(socket_path, timeout)
    if sock is None:
        return None
    with sock:
        sock.sendall((json.dumps(request) + "\n").encode("utf-8"))
        with sock.makefile("rb") as fh:
            line = fh.readline()
    if not line:
        return None
    answer = json.loads(line)
    if not isinstance(answer, dict):
        raise IndexStoreError("the daemon sent a malformed answer on its socket")
    if not answer.get("ok"):
        raise IndexStoreError(f"the daemon refused: {answer.get('error')}")
    return answer
