"""The `nexusd` command line: parse arguments, call the library, print.

Subcommands are imported only when used, so `nexusd --help` and git hooks stay fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from nexusd import __version__
from nexusd.cli._group import SuggestingGroup
from nexusd.errors import EXIT_BUG, NexusError

# name -> (module, attribute, one-line help shown by `nexusd --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("nexusd.cli.init", "init", "Scaffold nexusd's files in this repository."),
    "request": ("nexusd.cli.request", "request", "Write plan requests."),
    "plan": ("nexusd.cli.plan", "plan", "Answer one plan request in the foreground."),
    "config": ("nexusd.cli.config", "config", "Show the merged configuration."),
    "start": ("nexusd.cli.daemon", "start", "Start the daemon for this repository."),
    "stop": ("nexusd.cli.daemon", "stop", "Stop the daemon gracefully."),
    "status": ("nexusd.cli.daemon", "status", "Show whether the daemon runs and what it did."),
    "logs": ("nexusd.cli.daemon", "logs", "Print (or follow) the daemon's log."),
    "service": ("nexusd.cli.service", "service", "Install the daemon as a user service."),
    "checkpoint": ("nexusd.cli.checkpoint", "checkpoint", "Snapshot and restore the work tree."),
    "hooks": ("nexusd.cli.hooks", "hooks", "Install, remove or inspect nexusd's git hooks."),
    "check": ("nexusd.cli.check", "check", "Run the configured checks in the sandbox."),
    "doctor": ("nexusd.cli.doctor", "doctor", "Tell which sandbox isolation is available."),
    "sandbox": ("nexusd.cli.sandbox", "sandbox", "Build the project's check image."),
    "memory": ("nexusd.cli.memory", "memory", "Search and maintain the memory index."),
    "code": ("nexusd.cli.code", "code", "Search and inspect the code index."),
    "solve": ("nexusd.cli.solve", "solve", "Let the model write code until the sandbox passes it."),
    "stats": ("nexusd.cli.stats", "stats", "Summarize model usage and phase timings."),
    "mcp": ("nexusd.cli.mcp", "mcp", "Serve this repository to MCP clients over stdio."),
    "token": ("nexusd.cli.token", "token", "Create and revoke the context API's tokens."),
}

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  the command ran and its result is a failure (checks failed, not solved)
  2  bad usage (click)
  3  configuration error
  4  protocol error (a request that cannot be answered)
  5  git error (not a repository, a git command failed)
  6  sandbox error
  7  daemon error (not running, already running, not ready)
  8  memory or code index error (the index itself failed)
  9  access refused (no or bad token, a role that may not)
  10 refused: bad input, or a write nexusd will not make
  70 unexpected error: a bug in nexusd (the traceback is printed)
"""


class NexusClickError(click.ClickException):
    """A NexusError shown as `error: …` with its own exit code (and as JSON for `--json`)."""

    def __init__(self, error: NexusError, *, as_json: bool = False) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click declares a ClassVar
        self.error = error
        self.as_json = as_json

    def show(self, file: Any = None) -> None:
        from nexusd.cli._style import label

        if self.as_json:
            echo_error_json(
                type(self.error).__name__, self.error.message, self.error.hint, self.exit_code
            )
        click.echo(f"{label('error')} {self.format_message()}", err=True)


def echo_error_json(kind: str, message: str, hint: str | None, exit_code: int) -> None:
    """`{"error": {...}}` on standard output, for scripts that asked for `--json`."""
    import json

    from nexusd.cli._common import escape_surrogates

    error = {"kind": kind, "message": message, "hint": hint, "exit_code": exit_code}
    click.echo(escape_surrogates(json.dumps({"error": error}, ensure_ascii=False)))


def wants_json(args: list[str]) -> bool:
    """Whether the command line asks for `--json` (before any `--`)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


class LazyGroup(SuggestingGroup):
    """A click group whose subcommands are imported on first use."""

    def invoke(self, ctx: click.Context) -> Any:
        # Read before click consumes them: the failing subcommand's context is gone by the
        # time its error reaches this frame.
        as_json = wants_json(list(ctx.args))
        try:
            return super().invoke(ctx)
        except NexusError as exc:
            raise NexusClickError(exc, as_json=as_json) from exc
        except click.ClickException as exc:  # a usage error, an editor that failed, …
            if as_json:
                kind = "UsageError" if isinstance(exc, click.UsageError) else "ClickException"
                echo_error_json(kind, exc.format_message(), None, exc.exit_code)
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr, short_help = entry
        if ctx.resilient_parsing or "--help" in sys.argv[1:2]:
            # `nexusd --help` lists commands without importing them.
            return click.Command(cmd_name, short_help=short_help, help=short_help)
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="nexusd")
def cli() -> None:
    """nexusd answers Template A plan requests, runs checks, checkpoints and remembers.

    \b
    Typical use, inside a git repository:
      nexusd init                 # scaffold .nexus/, .scratchpad_logs/, MEMORY.md
      nexusd start                # run the daemon in the background
      nexusd request new --goal "Fix the flaky login test"
      # ...a *_plan_response.md appears next to the request
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script and `python -m nexusd`."""
    try:
        cli.main(args=argv, prog_name="nexusd")
    except Exception:
        # Expected failures are NexusErrors with their own codes (handled by click above);
        # anything else is a bug, and scripts must be able to tell it apart.
        import traceback

        traceback.print_exc()
        message = "unexpected error, a bug in nexusd: please report it with the traceback above"
        if wants_json(sys.argv[1:] if argv is None else argv):
            echo_error_json("bug", message, None, EXIT_BUG)
        click.echo(f"error: {message}", err=True)
        raise SystemExit(EXIT_BUG) from None
