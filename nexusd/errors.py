"""The errors nexusd raises at its boundaries; each message says what to do next.

The CLI maps each class to an exit code (see README "Exit codes"); the daemon
logs them and carries on; git hooks fail open.
"""

from __future__ import annotations

# Exit codes that belong to no error class (the classes' own are beside them below).
EXIT_FAILED = 1  # the command ran and its result is a failure: checks failed, not solved
EXIT_USAGE = 2  # bad usage, as click reports it
EXIT_BUG = 70  # an unexpected error: a bug in nexusd (EX_SOFTWARE of sysexits.h)


class NexusError(Exception):
    """Base of every error nexusd raises on purpose; `hint` says how to fix it."""

    exit_code = 10  # refused: bad input, or a write nexusd will not make

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  fix: {self.hint}"
        return self.message


class ConfigError(NexusError):
    """Invalid configuration: names the file and the dotted key at fault."""

    exit_code = 3

    def __init__(
        self, message: str, *, hint: str | None = None, problems: list[ConfigError] | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        # Every problem found (one load reports all of them); [self] for a single one.
        self.problems: list[ConfigError] = problems or [self]


class ProtocolError(NexusError):
    """A plan request that cannot be answered as written."""

    exit_code = 4

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.line = line
        self.field = field


class GitError(NexusError):
    """Not a repository, or a git operation that failed."""

    exit_code = 5


class SandboxError(NexusError):
    """A sandbox backend that is missing, unreachable or misused."""

    exit_code = 6


class DaemonError(NexusError):
    """The daemon is not running, already running, or did not become ready."""

    exit_code = 7


class IndexStoreError(NexusError):
    """The memory index cannot be opened, read or written."""

    exit_code = 8


class AccessError(NexusError):
    """A caller the context API or the MCP server refuses: `status` is the HTTP answer
    (401 no or bad token, 403 a role that may not, 400 an unknown category)."""

    exit_code = 9

    def __init__(self, message: str, *, hint: str | None = None, status: int = 403) -> None:
        super().__init__(message, hint=hint)
        self.status = status
