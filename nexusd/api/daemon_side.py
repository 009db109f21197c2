"""What the API needs from the repository's daemon, handed in by whoever serves the API.

The daemon serves the API (its loopback server), so the API never imports the daemon's
modules: the daemon, or `nexusd mcp` in its own process, passes these functions in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nexusd.config import Config
from nexusd.paths import RepoLayout

if TYPE_CHECKING:  # the planner is imported by whoever waits, not by every API import
    from nexusd.planner.grounding import Services


@dataclass(frozen=True)
class PlanWait:
    """A plan request waited for: its response file, and how it ended (`note` while pending)."""

    response: Path
    status: str | None
    by: str
    note: str | None = None


class WaitForPlan(Protocol):
    """Wait for a request's response, by the daemon or answered in this process."""

    def __call__(
        self,
        layout: RepoLayout,
        config: Config,
        request: Path,
        *,
        timeout: float,
        services: Callable[[], Services],
    ) -> PlanWait: ...


@dataclass(frozen=True)
class DaemonSide:
    """The daemon's pid, a plan waited for, and its published status."""

    running_pid: Callable[[RepoLayout], int | None]
    wait_for_plan: WaitForPlan
    describe: Callable[[RepoLayout], dict[str, Any]]
