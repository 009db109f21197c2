"""`nexusd mcp` as a process: stdout carries only the protocol, help says how to configure
clients, the same way the README does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from daemon.helpers import PROJECT_ROOT, nexusd, nexusd_env

from nexusd.cli import cli

SNIPPETS = (
    "claude mcp add --scope project nexusd -- nexusd mcp",
    '"mcpServers"',
    "[mcp_servers.nexusd]",
    'args = ["mcp", "-C", "/path/to/your-repo"]',
)


def test_help_and_readme_give_the_client_configs() -> None:
    shown = CliRunner().invoke(cli, ["mcp", "--help"]).output
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    for snippet in SNIPPETS:
        assert snippet in shown, snippet
        assert snippet in readme, snippet


def test_stdout_is_only_json_rpc_and_logs_go_to_stderr(served: Path) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "nexusd", "mcp", "-C", str(served)],
        input=json.dumps(hello) + "\n",
        env=nexusd_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, proc.stderr
    answers = [json.loads(line) for line in lines]  # every stdout line is a JSON-RPC message
    assert answers[0]["id"] == 1 and answers[0]["result"]["serverInfo"]["name"] == "nexusd"
    assert "serving" in proc.stderr and "role 'user'" in proc.stderr


def test_token_names_are_printable_and_listed_safely(served: Path) -> None:
    for bad in ("evil\x1b[31mred", "two\nlines", "bell\x07", "x" * 65):
        made = nexusd(served, "token", "create", "--role", "user", "--name", bad, check=False)
        assert made.returncode == 2 and "--name" in made.stderr, (bad, made.stderr)
        assert "\x1b" not in made.stderr and not made.stdout.strip()
    assert nexusd(served, "token", "create", "--role", "user", "--name", "cursor ü").stdout
    # A name stored before names were checked (or by hand) is shown escaped, never raw.
    store = served / ".git" / "nexus" / "tokens.json"
    data = json.loads(store.read_text(encoding="utf-8"))
    data["tokens"].append({**data["tokens"][0], "sha256": "f" * 64, "name": "a\x1b[2Jb"})
    store.write_text(json.dumps(data), encoding="utf-8")
    listed = nexusd(served, "token", "list").stdout
    assert "cursor ü" in listed and "a\\x1b[2Jb" in listed and "\x1b" not in listed
    assert len(nexusd(served, "token", "list").stdout.splitlines()) == 2
