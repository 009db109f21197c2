"""Every configuration key and its default: the one table `load_config` validates against.

`nexusd init` writes `nexusd/templates/config.yaml`, which holds the same values (a test
keeps the two equal).
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "version": 1,
    "watch": {
        "paths": [".scratchpad_logs", ".scratchpad"],
        "debounce_ms": 50,
        # After a writer closed the file (or renamed it into place): the wait is this short.
        "settle_ms": 5,
        # A file modified but not yet closed is treated as complete after this much silence.
        "write_grace_ms": 2000,
        "rescan_seconds": 30,
        "max_request_bytes": 1_048_576,
        "queue_size": 1000,
    },
    "planner": {
        "provider": "offline",
        "catalog": None,
        "max_actions": 8,
        # LLM providers: retries per model call, the whole answer's time box, prompt budget.
        "max_retries": 2,
        "timeout_ms": 120_000,
        "max_context_tokens": 6000,
    },
    # Per-role model routing; a role whose provider is null uses planner.provider.
    "routing": {
        role: {
            "provider": None,
            "model": None,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "format": fmt,
        }
        for role, temperature, max_tokens, fmt in (
            ("librarian", 0.1, 256, "json"),
            ("architect", 0.2, 2048, "json"),
            ("builder", 0.2, 2048, "text"),
            ("critic", 0.1, 512, "text"),
        )
    },
    # Named provider settings (free-form names; see PROVIDER_KEYS).
    "providers": {},
    "checks": [],
    "sandbox": {
        "backend": "auto",
        "image": "nexusd-python:bookworm",
        "timeout": 60,
        "memory": "256m",
        "cpus": 1.0,
        "pids": 128,
        "output_limit_bytes": 65_536,
        "warm_pool": 0,
        "ro_binds": [],
    },
    "memory": {
        "enabled": True,
        "index_uri": None,
        "model": "all-MiniLM-L6-v2",
        "sources": ["MEMORY.md", "memory/daily/*.md"],
        "extra_globs": [],
        "max_file_bytes": 2_097_152,
        "chunk_max_chars": 1500,
        "optimize_minutes": 10,
        "search": {
            "mode": "hybrid",
            "k": 8,
            "fusion": "score",
            "rrf_k": 60,
            "depth": 100,
            "vector_weight": 0.75,
            "keyword_weight": 0.25,
            "vector_norm": "none",
            "keyword_norm": "max",
            "floor_missing": True,
            "recency_half_life_days": None,
            "cache_max_rows": 50_000,
        },
    },
    "code": {
        "enabled": True,
        # Globs (fnmatch, `*` crosses folders) of tracked files the code index skips, on top
        # of nexusd's own list of vendored and generated files (node_modules, *.min.js, …).
        "exclude": [],
        "default_excludes": True,
        "max_file_bytes": 1_048_576,
        "max_files": 200_000,
        # Ranked files a response lists (`relevant_files`) and its `## Relevant Code` shows.
        "max_results": 10,
        # Parser processes for a large (re)build; 0 = one per core.
        "workers": 0,
        "reproduce": {"mode": "auto", "python": "python3", "timeout": 15, "memory": "1g"},
    },
    "checkpoint": {
        "on_request": True,
        "on_commit": True,
        "max_untracked_file_bytes": 52_428_800,
        "retention": {
            "keep_last": 50,
            "keep_days": 14,
            "daily_beyond": True,
            "keep_passed": True,
            "keep_named": True,
        },
    },
    "daemon": {
        "log_level": "info",
    },
    # The context API and MCP over HTTP, served by the daemon on loopback (see nexusd/api/).
    "api": {
        "enabled": False,
        "host": "127.0.0.1",
        "port": 7319,
        "max_body_bytes": 65_536,
        # Role of `nexusd mcp` over stdio; null: the least role that may save lessons.
        "mcp_role": None,
        # Each role and the roles it includes.
        "roles": {
            "user": [],
            "developer": ["user"],
            "analyst": ["user"],
            "admin": ["developer", "analyst"],
        },
        # The role each memory category requires (seed 000's table, plus MEMORY.md's).
        "categories": {
            "conversation": "user",
            "daily": "user",
            "lessons": "user",
            "notes": "user",
            "decisions": "developer",
            "preferences": "developer",
            "project": "developer",
            "finance": "analyst",
            "security": "admin",
            "system": "admin",
        },
        # Indexed chunks in a category not listed above (a custom `## Heading`).
        "other_categories": "developer",
        # The role each operation besides memory requires.
        "actions": {
            "read": "user",
            "plan": "developer",
            "checks": "developer",
            "checkpoint": "developer",
            "restore": "admin",
        },
    },
}
