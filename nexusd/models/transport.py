"""JSON over HTTP with a hard deadline, on the standard library only.

Every socket operation gets the time that is left, and the body is read in
chunks so a server that trickles bytes cannot hold a call past its deadline.
"""

from __future__ import annotations

import http.client
import json
import time
from typing import Any
from urllib.parse import urlsplit

from nexusd.models.base import ProviderError, ProviderTimeout

_CHUNK = 65_536
_MAX_BODY = 16 * 1024 * 1024


def post_json(
    url: str, body: dict[str, Any], *, timeout_s: float, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """POST `body` as JSON to `url`; return the decoded object or raise ProviderError."""
    deadline = time.monotonic() + timeout_s
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProviderError(f"bad provider URL {url!r}", hint="use http://host:port/path")
    conn_cls = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    conn = conn_cls(parts.hostname, parts.port, timeout=max(timeout_s, 0.001))
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    payload = json.dumps(body).encode("utf-8")
    all_headers = {"Content-Type": "application/json", "Accept": "application/json"}
    all_headers.update(headers or {})
    try:
        conn.request("POST", path, body=payload, headers=all_headers)
        _set_timeout(conn, deadline)
        response = conn.getresponse()
        raw = _read_body(conn, response, deadline)
        status = response.status
    except TimeoutError as exc:
        raise ProviderTimeout(f"{url}: no answer within {timeout_s:.1f}s") from exc
    except (ConnectionError, OSError, http.client.HTTPException) as exc:
        raise ProviderError(f"{url}: {type(exc).__name__}: {exc}", retryable=True) from exc
    finally:
        conn.close()
    if status == 429 or status >= 500:
        raise ProviderError(f"{url}: HTTP {status}: {_snippet(raw)}", retryable=True, status=status)
    if status >= 400:
        raise ProviderError(
            f"{url}: HTTP {status}: {_snippet(raw)}",
            status=status,
            hint="check the provider's base_url, model and API key",
        )
    try:
        decoded = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProviderError(
            f"{url}: the server answered something that is not JSON: {_snippet(raw)}",
            status=status,
        ) from exc
    if not isinstance(decoded, dict):
        raise ProviderError(f"{url}: expected a JSON object, got {_snippet(raw)}", status=status)
    return decoded


def _set_timeout(conn: http.client.HTTPConnection, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    if conn.sock is not None:
        conn.sock.settimeout(left)


def _read_body(
    conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float
) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        _set_timeout(conn, deadline)
        chunk = response.read1(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > _MAX_BODY:
            raise http.client.HTTPException(f"answer larger than {_MAX_BODY} bytes")


def _snippet(raw: bytes, limit: int = 200) -> str:
    text = raw.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return text[:limit] + ("…" if len(text) > limit else "")
