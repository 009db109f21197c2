"""`nexusd mcp`: serve this repository to an MCP client (Claude Code, Cursor, Codex…) over stdio."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import open_repo, repo_option


@click.command()
@click.option(
    "--role",
    default=None,
    help="Role of the client (default: api.mcp_role, else the least that may save lessons).",
)
@repo_option
def mcp(role: str | None, repo: Path | None) -> None:
    """Serve this repository's memory, code index, plans, checks and checkpoints over MCP (stdio).

    \b
    Tools: memory_search, memory_save, memory_get, memory_categories, code_search,
    code_symbols, code_impact, open_file, request_plan, run_checks, checkpoint_create,
    checkpoint_list, checkpoint_restore, status. Resources: nexusd://memory/MEMORY.md,
    nexusd://plans/latest. With a daemon running (`nexusd start`) it asks the daemon;
    otherwise it opens the indexes itself. Logs go to stderr; stdout is the protocol.

    \b
    Claude Code (in the repository):
      claude mcp add --scope project nexusd -- nexusd mcp
    Cursor (.cursor/mcp.json) and any client with an mcpServers file:
      {"mcpServers": {"nexusd": {"command": "nexusd",
                                 "args": ["mcp", "-C", "/path/to/your-repo"]}}}
    Codex (~/.codex/config.toml):
      [mcp_servers.nexusd]
      command = "nexusd"
      args = ["mcp", "-C", "/path/to/your-repo"]
    """
    from nexusd.api.mcp_server import serve_stdio
    from nexusd.daemon.serving import daemon_side

    layout, config = open_repo(repo)
    serve_stdio(layout, config, role, daemon_side())
