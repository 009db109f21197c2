"""The MCP server: nexusd's memory, code map, plans, checks and checkpoints as MCP tools.

Built on the official SDK's `MCPServer`; the same server runs over stdio (`nexusd mcp`,
one role from the command line) and over streamable HTTP at the daemon's `/mcp` (one
server per role, picked by each request's bearer token). Every tool is a thin adapter
over `nexusd.api.context` and `nexusd.api.operations`; an expected failure (a refused role,
a path outside the repository, an unknown checkpoint) is a tool error the agent reads,
never a crash of the server.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from nexusd import __version__
from nexusd.api import file_slice, operations
from nexusd.api.context import Context
from nexusd.api.daemon_side import DaemonSide
from nexusd.api.roles import KIND_CATEGORY, visible_sections
from nexusd.api.strict_tools import strict
from nexusd.config import Config
from nexusd.errors import AccessError, NexusError
from nexusd.paths import RepoLayout

log = logging.getLogger("nexusd.api")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = """\
nexusd serves one git repository: its memory (MEMORY.md lessons, decisions, preferences,
daily notes), a code index (files, classes, functions, imports), plan requests answered as
Template A responses, sandboxed checks and working-tree checkpoints. Search memory and
code before planning; save a lesson when something went wrong or right; request a plan
for a goal; run the checks; create a checkpoint before risky edits."""


def _guarded(fn: F) -> F:
    """Turn nexusd's expected errors into MCP tool errors with their fix, and any other
    exception into a `Type: message` tool error (its traceback logged on stderr)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AccessError as exc:
            kind = {400: "bad request", 401: "unauthorized", 403: "forbidden", 404: "not found"}
            raise ToolError(f"{kind.get(exc.status, 'refused')}: {exc}") from exc
        except NexusError as exc:
            raise ToolError(str(exc)) from exc
        except ToolError:
            raise
        except Exception as exc:
            log.exception("tool %s failed unexpectedly", fn.__name__)
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return run  # type: ignore[return-value]


# Tools that run for seconds to minutes share this many worker threads (per event loop),
# apart from anyio's default pool, so searches and reads are never queued behind them.
LONG_TOOL_THREADS = 3
_long_limiter: RunVar[CapacityLimiter] = RunVar("nexusd_long_tools")


def _long_tool(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """Run the sync tool `fn` in a worker thread of the long tools' own small pool."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Any:
        try:
            limiter = _long_limiter.get()
        except LookupError:
            limiter = CapacityLimiter(LONG_TOOL_THREADS)
            _long_limiter.set(limiter)
        call = functools.partial(fn, *args, **kwargs)
        return await anyio.to_thread.run_sync(call, limiter=limiter)

    return run


def build_server(api: Context, role: str) -> MCPServer[Any]:
    """The MCP server of one repository for callers of `role` (one server per role)."""
    layout, config, access = api.layout, api.config, api.access
    tools: list[Tool] = []

    def tool(fn: F) -> F:
        tools.append(strict(Tool.from_function(fn)))
        return fn

    def allowed(action: str) -> None:
        access.require_action(role, action)

    def recall() -> Any:
        """The memory an answer made in this process searches (None when it is off)."""
        return api.backend.memory() if config.memory.enabled else None

    @tool
    @_guarded
    def memory_search(
        query: Annotated[str, Field(description="What to look for, in words.")],
        category: Annotated[
            str | None, Field(description="Only this category: lessons, decisions, daily…")
        ] = None,
        recent_days: Annotated[
            int | None, Field(description="Only entries dated within the last N days.")
        ] = None,
        k: Annotated[int, Field(description="Number of results.", ge=1, le=100)] = 8,
    ) -> dict[str, Any]:
        """Search the repository's memory (MEMORY.md and daily notes) by meaning and words.

        Returns hits with id, path:line citation, heading, snippet, category and date;
        only categories your role may read are searched."""
        return api.search(role, query, limit=k, category=category, recent_days=recent_days)

    @tool
    @_guarded
    def memory_save(
        text: Annotated[str, Field(description="The entry: one or a few sentences.")],
        kind: Annotated[
            Literal["lesson", "decision", "preference", "note"] | None,
            Field(description="Which MEMORY.md section it goes under (default lesson)."),
        ] = None,
        tags: Annotated[list[str], Field(description="Tags such as ci, flaky.")] = [],  # noqa: B006
        daily: Annotated[
            bool,
            Field(description="Write to today's daily note instead of MEMORY.md (no kind)."),
        ] = False,
    ) -> dict[str, Any]:
        """Remember something: a lesson, decision, preference or note.

        Written into MEMORY.md under its section (or today's note in memory/daily/), then
        indexed, so memory_search finds it at once. Returns its path, line and chunk id."""
        if daily and kind is not None:
            # A daily note has no sections: the kind would be dropped without a word.
            raise NexusError(
                f"daily: true writes today's daily note, which has no kind ({kind!r} was given)",
                hint=f"leave out kind to write the daily note, or daily to file it as a {kind}",
            )
        category = "daily" if daily else KIND_CATEGORY[kind or "lesson"]
        return api.ingest(role, text, category, tags=tags)

    @tool
    @_guarded
    def memory_get(
        id: Annotated[str, Field(description="A chunk id from memory_search results.")],
    ) -> dict[str, Any]:
        """Read one whole memory chunk by its id (path, heading, body, lines, category)."""
        return api.get(role, id)

    @tool
    @_guarded
    def memory_categories() -> dict[str, Any]:
        """List the memory categories, the role each requires and which your role may use."""
        return api.categories(role)

    @tool
    @_guarded
    def code_search(
        query: Annotated[
            str,
            Field(
                description="A question, bug report or traceback. Its first line (past an"
                " issue template's markup, a salutation and lines such as 'Bug report' or"
                " 'Investigate the issue below') is read as the title: start with what is"
                " wrong."
            ),
        ],
        k: Annotated[int, Field(description="Files to rank.", ge=1, le=100)] = 10,
    ) -> dict[str, Any]:
        """Rank the files and functions a question, bug report or traceback is about,
        with the reason for each (path, score, reasons, units with lines), the best tests
        to run or extend (`tests`) and the line read as its title (`title`, "" for none)."""
        allowed("read")
        from nexusd.code.query import within_reach

        # What the ranking reads of it, within the daemon's request line.
        text, _cut = within_reach(query)
        return _strip(api.backend.code({"op": "code_search", "query": text, "k": k}))

    @tool
    @_guarded
    def code_symbols(
        path: Annotated[str, Field(description="A file path relative to the repository.")],
    ) -> dict[str, Any]:
        """List the classes, functions and methods of one file, with lines and signatures."""
        allowed("read")
        return _strip(api.backend.code({"op": "code_symbols", "path": path}))

    @tool
    @_guarded
    def code_impact(
        path: Annotated[str, Field(description="A file path relative to the repository.")],
        symbol: Annotated[
            str | None, Field(description="A class or function in it, e.g. Config.load.")
        ] = None,
    ) -> dict[str, Any]:
        """Who imports, calls or subclasses a file or symbol, and what it uses."""
        allowed("read")
        request = {"op": "code_impact", "path": path, "symbol": symbol}
        return _strip(api.backend.code(request))

    @tool
    @_guarded
    def open_file(
        path: Annotated[str, Field(description="A file path relative to the repository.")],
        start_line: Annotated[int, Field(description="First line (1-based).", ge=1)] = 1,
        end_line: Annotated[
            int | None, Field(description="Last line (inclusive); at most 400 lines.", ge=1)
        ] = None,
    ) -> dict[str, Any]:
        """Read a slice of a file inside the repository (at most 400 lines / 64 KiB)."""
        allowed("read")
        return file_slice.open_slice(
            layout, config, path, start_line, end_line, access=access, role=role
        )

    @tool
    @_long_tool
    @_guarded
    def request_plan(  # noqa: PLR0917 (an MCP tool: one parameter per argument)
        goal: Annotated[str, Field(description="What this cycle must achieve.")],
        cycle: Annotated[int | None, Field(description="Cycle number.", ge=0)] = None,
        blockers: Annotated[list[str], Field(description="Current blockers.")] = [],  # noqa: B006
        artifacts: Annotated[list[str], Field(description="Relevant files.")] = [],  # noqa: B006
        time_box: Annotated[str | None, Field(description="e.g. '2 hours'.")] = None,
        timeout_seconds: Annotated[
            float, Field(description="How long to wait for the answer.", gt=0, le=3600)
        ] = 300,
    ) -> dict[str, Any]:
        """Ask nexusd for a plan: writes a Template A request into .scratchpad_logs/, waits
        for the response (the daemon's, or made here without one) and returns its text.
        Past timeout_seconds the status is `pending` and `response` names the file the
        answer will be written to."""
        allowed("plan")
        return operations.request_plan(
            layout,
            config,
            goal,
            cycle=cycle,
            blockers=tuple(blockers),
            artifacts=tuple(artifacts),
            time_box=time_box,
            timeout_seconds=timeout_seconds,
            recall=recall,
            daemon=api.backend.daemon,
        )

    @tool
    @_long_tool
    @_guarded
    def run_checks(
        names: Annotated[list[str], Field(description="Only these checks.")] = [],  # noqa: B006
    ) -> dict[str, Any]:
        """Run the checks configured in .nexus/config.yaml in the sandbox on a snapshot of
        the working tree; returns each check's status, exit code and output tail."""
        allowed("checks")
        return operations.run_checks(layout, config, tuple(names))

    @tool
    @_long_tool
    @_guarded
    def checkpoint_create(
        message: Annotated[str | None, Field(description="Describe the checkpoint.")] = None,
    ) -> dict[str, Any]:
        """Snapshot the whole working tree as refs/nexus/checkpoints/<id> (HEAD, index and
        branches untouched); returns the id and the command that restores it."""
        allowed("checkpoint")
        return operations.checkpoint_create(layout, config, message)

    @tool
    @_guarded
    def checkpoint_list(
        limit: Annotated[int, Field(description="Newest N.", ge=1, le=500)] = 20,
    ) -> dict[str, Any]:
        """List checkpoints, newest first, with reason, cycle, files changed and checks."""
        allowed("read")
        return operations.checkpoint_list(layout, limit)

    @tool
    @_long_tool
    @_guarded
    def checkpoint_restore(
        checkpoint_id: Annotated[str, Field(description="An id from checkpoint_list.")],
        dry_run: Annotated[bool, Field(description="Only say what would change.")] = False,
    ) -> dict[str, Any]:
        """Make the working tree match a checkpoint (a pre-restore checkpoint is taken
        first, so it can be undone). Refused unless your role may restore."""
        allowed("restore")
        return operations.checkpoint_restore(layout, config, checkpoint_id, dry_run=dry_run)

    @tool
    @_guarded
    def status() -> dict[str, Any]:
        """Whether nexusd's daemon runs for this repository and what it did (answered,
        queued, errors, memory and code index state), plus your role."""
        allowed("read")
        found = {**operations.status(layout, api.backend.daemon), "role": role}
        if not found.get("running") and config.code.enabled:
            # Not a stopped daemon's last word: the index this process answers from.
            found["code"] = api.backend.code_here_summary()
        return found

    server: MCPServer[Any] = MCPServer(
        "nexusd", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING", tools=tools
    )

    @server.resource("nexusd://memory/MEMORY.md", mime_type="text/markdown")
    def memory_file() -> str:
        """MEMORY.md: the repository's lessons, decisions and preferences (the sections
        your role may read)."""
        try:
            text = operations.memory_text(layout, config.memory.max_file_bytes)
        except NexusError as exc:
            raise ResourceError(str(exc)) from exc
        if text is None:
            return "# Memory\n\n(empty: save something with memory_save)\n"
        return visible_sections(
            text, lambda category: access.includes(role, access.required_for(category))
        )

    @server.resource("nexusd://plans/latest", mime_type="text/markdown")
    def latest_plan() -> str:
        """The newest plan response in the watched folders (it quotes memory of every
        category: readable by the roles that may request plans)."""
        try:
            allowed("plan")
        except AccessError as exc:
            raise ResourceError(f"forbidden: {exc}") from exc
        return operations.latest_response(layout, config)

    return server


def _strip(answer: dict[str, Any]) -> dict[str, Any]:
    """A socket answer without its transport flag."""
    return {k: v for k, v in answer.items() if k != "ok"}


def serve_stdio(layout: RepoLayout, config: Config, role: str | None, daemon: DaemonSide) -> None:
    """Serve one repository over stdio until the client closes it; logs go to stderr."""
    from nexusd.api import stdio
    from nexusd.api.backend import Backend
    from nexusd.api.roles import Access, stdio_role

    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="nexusd mcp: %(levelname)s %(message)s"
    )
    chosen = stdio_role(config, Access.from_config(config), role)
    backend = Backend(layout, config, daemon=daemon)
    try:
        log.info("serving %s over stdio as role %r", layout.root, chosen)
        stdio.run(build_server(Context(layout, config, backend), chosen))
    finally:
        backend.close()
