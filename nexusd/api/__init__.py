"""Agents and tools talk to nexusd directly: the MCP server (stdio and streamable HTTP) and
the context API over HTTP, with bearer tokens mapped to roles. Thin adapters over the
library: `context` (memory by role), `operations` (files, plans, checks, checkpoints)."""
