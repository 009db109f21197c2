"""Fixtures for the daemon tests (defined in helpers so tests/cli can import them too)."""

from __future__ import annotations

from daemon.helpers import daemon, daemon_without_memory, served, start_daemon

__all__ = ["daemon", "daemon_without_memory", "served", "start_daemon"]
