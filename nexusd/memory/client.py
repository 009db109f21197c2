"""Client of the memory search server: one JSON line out, one back; None when none runs."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from nexusd.errors import IndexStoreError


def listening(socket_path: Path, timeout: float = 1.0) -> bool:
    """Whether a server accepts connections at `socket_path` (a daemon killed with -9 leaves
    the socket file behind, and nothing listens there)."""
    if not socket_path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(socket_path))
        except OSError:
            return False
    return True


def ask(socket_path: Path, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any] | None:
    """Send one request to the server at `socket_path`; None when no server listens there."""
    if not socket_path.exists():
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(socket_path))
        except OSError:
            return None
        sock.sendall((json.dumps(request) + "\n").encode("utf-8"))
        with sock.makefile("rb") as fh:
            line = fh.readline()
    if not line:
        return None
    answer = json.loads(line)
    if not isinstance(answer, dict):
        raise IndexStoreError("the memory server sent a malformed answer")
    if not answer.get("ok"):
        raise IndexStoreError(f"the memory server refused: {answer.get('error')}")
    return answer
