"""The context API over HTTP, and MCP's streamable-HTTP transport at `/mcp`, on loopback.

Starlette routes (the ASGI stack the MCP SDK brings), one per seed route:

- `GET /api/v1/context/search?q=&limit=&offset=&category=&recent_days=`
- `POST /api/v1/context/ingest` with `{"content", "category", "source"?, "tags"?}`
- `GET /api/v1/context/categories`
- `GET /api/v1/context/{id}`
- `/mcp`: the MCP server of the caller's role (stateless, JSON responses)

A trailing slash names the same route (`/mcp/`, `/search/`), and a path with no route is a
JSON 404 that lists them: never the web framework's bare 307 redirect, whose Location is
built from the request's own Host header and which a client holding a bearer token should
not follow blindly.

Every request needs `Authorization: Bearer <token>` (401 otherwise); answers are JSON with
`query_time_ms`; errors are `{"error", "fix", "status"}` (400 bad input or an unknown
category, with the valid ones; 403 a role that may not; 404; 413 a body over
`api.max_body_bytes`). Blocking library calls run in worker threads.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio.to_thread
from mcp.server.transport_security import (
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from nexusd.api.bearer import TokenStore
from nexusd.api.context import Context
from nexusd.api.mcp_server import build_server
from nexusd.errors import AccessError, ConfigError, IndexStoreError, NexusError

log = logging.getLogger("nexusd.api")
SEARCH_PARAMS = frozenset({"q", "limit", "offset", "category", "recent_days", "since"})
INGEST_FIELDS = frozenset({"content", "category", "source", "tags"})
PREFIX = "/api/v1/context"
MCP_PATH = "/mcp"
ROUTES_HINT = (
    f"use {PREFIX}/search, {PREFIX}/ingest, {PREFIX}/categories, {PREFIX}/{{id}} or {MCP_PATH}"
)
Handler = Callable[[Request, str], Awaitable[Any]]
_WHOLE = re.compile(r"-?[0-9]{1,4000}")  # int() refuses 4300 digits and more


def error_response(exc: NexusError, started: float) -> JSONResponse:
    """The JSON answer of a refused or failed request."""
    if isinstance(exc, AccessError):
        status = exc.status
    elif isinstance(exc, ConfigError | IndexStoreError):
        status = 503
    else:
        status = 400
    body: dict[str, Any] = {"error": exc.message, "fix": exc.hint, "status": status}
    body["query_time_ms"] = round((time.perf_counter() - started) * 1000, 3)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


def _bad(message: str, hint: str, status: int = 400) -> AccessError:
    return AccessError(message, hint=hint, status=status)


def _int(params: dict[str, str], name: str, default: int | None) -> int | None:
    if name not in params:
        return default
    text = params[name]
    # Digits only: int() also reads " 7", "1_0" and other scripts' digits, which no client
    # sending a count means; `true` and the like are refused with them.
    if not _WHOLE.fullmatch(text):
        raise _bad(f"`{name}` must be a whole number, got {text!r}", f"e.g. {name}=10")
    return int(text)


class Api:
    """The routes of one repository's API over a `Context` and its tokens."""

    def __init__(
        self, context: Context, tokens: TokenStore, max_body_bytes: int, host: str = "127.0.0.1"
    ) -> None:
        self.context = context
        self.tokens = tokens
        self.max_body = max_body_bytes
        self.security = loopback_security(host)

    def role_of(self, authorization: str | None) -> str:
        """The role of a request's bearer token; 401 or 403 (a role no longer configured)."""
        role = self.tokens.role_of(authorization)
        if role not in self.context.access.roles:
            raise AccessError(
                f"this token's role {role!r} is no longer configured",
                hint="create a new token with a role from api.roles",
                status=403,
            )
        return role

    async def foreign(self, request: Request) -> AccessError | None:
        """421 or 403 when the Host or Origin header is not this loopback server's."""
        refused = await self.security.validate_request(request)
        if refused is None:
            return None
        # DNS rebinding: a page elsewhere posing as loopback.
        what = "Host" if refused.status_code == 421 else "Origin"
        return _bad(
            f"the {what} header does not name this loopback server",
            "connect to http://127.0.0.1:<api.port> (or localhost) directly",
            refused.status_code,
        )

    def route(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint: authenticate, run `handler`, answer JSON (errors included)."""

        async def endpoint(request: Request) -> Response:
            started = time.perf_counter()
            foreign = await self.foreign(request)
            if foreign is not None:
                return error_response(foreign, started)
            try:
                role = self.role_of(request.headers.get("authorization"))
                return JSONResponse(await handler(request, role))
            except NexusError as exc:
                return error_response(exc, started)
            except Exception as exc:  # a bug: say what, log where, never a bare 500 page
                log.exception("%s %s failed", request.method, request.url.path)
                body = {
                    "error": f"internal error: {type(exc).__name__}: {exc}",
                    "fix": "see `nexusd logs` and report it",
                    "status": 500,
                }
                return JSONResponse(body, status_code=500)

        return endpoint

    async def search(self, request: Request, role: str) -> Any:
        """GET /api/v1/context/search."""
        params = dict(request.query_params)
        unknown = sorted(set(params) - SEARCH_PARAMS)
        if unknown:
            raise _bad(
                f"unknown parameter(s): {', '.join(unknown)}",
                "use: q, limit, offset, category, recent_days, since",
            )
        query = params.get("q", "")
        limit, offset = _int(params, "limit", 10), _int(params, "offset", 0)
        recent = _int(params, "recent_days", None)
        return await anyio.to_thread.run_sync(
            lambda: self.context.search(
                role,
                query,
                limit=limit or 0,
                offset=offset or 0,
                category=params.get("category"),
                recent_days=recent,
                since=params.get("since"),
            )
        )

    async def _json_body(self, request: Request) -> dict[str, Any]:
        declared = request.headers.get("content-length")
        too_big = _bad(
            f"the body is larger than {self.max_body} bytes",
            "send a shorter entry, or raise api.max_body_bytes",
            413,
        )
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            raise too_big
        raw = b""
        async for part in request.stream():
            raw += part
            if len(raw) > self.max_body:
                raise too_big
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _bad(
                f"the body is not JSON: {exc}", 'send {"content": …, "category": …}'
            ) from exc
        except RecursionError:
            raise _bad(
                "the body is nested too deeply to read", 'send {"content": …, "category": …}'
            ) from None
        if not isinstance(data, dict):
            raise _bad("the body must be a JSON object", 'send {"content": …, "category": …}')
        return data

    async def ingest(self, request: Request, role: str) -> Any:
        """POST /api/v1/context/ingest."""
        data = await self._json_body(request)
        unknown = sorted(set(data) - INGEST_FIELDS)
        if unknown:
            raise _bad(
                f"unknown field(s): {', '.join(unknown)}", "fields: content, category, source, tags"
            )
        content, category = data.get("content"), data.get("category")
        source, tags = data.get("source"), data.get("tags") or []
        if not isinstance(content, str) or not isinstance(category, str):
            raise _bad("`content` and `category` are required strings", "send both")
        if source is not None and not isinstance(source, str):
            raise _bad("`source` must be a string", 'e.g. "cursor"')
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise _bad("`tags` must be a list of strings", 'e.g. ["ci", "flaky"]')
        return await anyio.to_thread.run_sync(
            lambda: self.context.ingest(role, content, category, source=source, tags=tags)
        )

    async def categories(self, request: Request, role: str) -> Any:
        """GET /api/v1/context/categories."""
        started = time.perf_counter()
        out = self.context.categories(role)
        return {**out, "query_time_ms": round((time.perf_counter() - started) * 1000, 3)}

    async def get(self, request: Request, role: str) -> Any:
        """GET /api/v1/context/{id}."""
        chunk_id = str(request.path_params["chunk_id"])
        if not chunk_id:  # `/api/v1/context/` itself: a route, not a chunk, was meant
            raise no_route_error(request.url.path)
        if chunk_id.rstrip("/") == "ingest":  # chunk ids are `path#heading#n`, never this
            raise not_allowed(request.method, request.url.path)
        return await anyio.to_thread.run_sync(lambda: self.context.get(role, chunk_id))


def loopback_security(host: str) -> TransportSecurityMiddleware:
    """The MCP SDK's DNS-rebinding check, for the loopback names and `host`."""
    name = f"[{host}]" if ":" in host else host
    names = dict.fromkeys(["127.0.0.1", "localhost", "[::1]", name])
    return TransportSecurityMiddleware(
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[h for n in names for h in (n, f"{n}:*")],
            allowed_origins=[o for n in names for o in (f"http://{n}", f"http://{n}:*")],
        )
    )


def no_route_error(path: str) -> AccessError:
    """The 404 of a path no route serves, listing the routes."""
    return _bad(f"no route {path}", ROUTES_HINT, 404)


def not_allowed(method: str, path: str) -> AccessError:
    """The 405 of a route that does not take `method`, saying which methods it takes."""
    hint = (
        f"MCP clients POST JSON-RPC messages to {MCP_PATH}"
        if path.rstrip("/") == MCP_PATH
        else "search, categories and chunks are GET; ingest is POST"
    )
    return _bad(f"{method} is not allowed on {path}", hint, 405)


async def _no_route(request: Request, exc: Exception) -> Response:
    """404 and 405 as the API's JSON errors."""
    if getattr(exc, "status_code", 404) == 405:
        error = not_allowed(request.method, request.url.path)
    else:
        error = no_route_error(request.url.path)
    return error_response(error, time.perf_counter())


class McpByRole:
    """`/mcp`: authenticate the bearer token, then hand the request to its role's server."""

    def __init__(self, api: Api, apps: dict[str, ASGIApp]) -> None:
        self.api = api
        self.apps = apps

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        try:
            # The Host first, as on the context routes: the SDK's own check answers text.
            foreign = await self.api.foreign(Request(scope, receive))
            if foreign is not None:
                raise foreign
            role = self.api.role_of(Headers(scope=scope).get("authorization"))
        except NexusError as exc:
            await error_response(exc, started)(scope, receive, send)
            return
        # `/mcp/` is served as `/mcp`: the role's app routes that path only, and would
        # answer any other with a redirect of its own.
        scope = {**scope, "path": MCP_PATH, "raw_path": MCP_PATH.encode()}
        await self.apps[role](scope, receive, send)


def build_app(context: Context, tokens: TokenStore, *, host: str, max_body_bytes: int) -> Starlette:
    """The whole ASGI application: context routes and `/mcp`, one MCP server per role."""
    api = Api(context, tokens, max_body_bytes, host)
    servers = {role: build_server(context, role) for role in context.access.roles}
    apps: dict[str, ASGIApp] = {
        role: server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            json_response=True,
            stateless_http=True,
            host=host,
            max_request_body_size=max_body_bytes,
        )
        for role, server in servers.items()
    }

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    named: list[tuple[str, Any, list[str]]] = [
        (f"{PREFIX}/search", api.route(api.search), ["GET"]),
        (f"{PREFIX}/ingest", api.route(api.ingest), ["POST"]),
        (f"{PREFIX}/categories", api.route(api.categories), ["GET"]),
        (MCP_PATH, McpByRole(api, apps), ["GET", "POST", "DELETE"]),
    ]
    # Each with and without a trailing slash, before the chunks' catch-all (chunk ids are
    # `path#heading#n`: `search/` never named one).
    routes = [
        Route(path + slash, endpoint, methods=methods)
        for path, endpoint, methods in named
        for slash in ("", "/")
    ]
    routes.append(Route(PREFIX + "/{chunk_id:path}", api.route(api.get), methods=["GET"]))
    handlers = {404: _no_route, 405: _no_route}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    # Starlette answers a path that matches once a slash is added or removed with a bare
    # 307 to a URL built from the Host header, before any route checks the token or the
    # Host: every path is served above or is a JSON 404 instead.
    app.router.redirect_slashes = False
    return app
