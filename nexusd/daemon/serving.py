"""What the daemon gives the API it serves: its pid, plans waited for, its status."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nexusd.api.daemon_side import DaemonSide, PlanWait
from nexusd.config import Config
from nexusd.daemon.control import describe
from nexusd.daemon.lock import running_pid
from nexusd.daemon.waiting import AnswerPending, wait_for_answer
from nexusd.paths import RepoLayout
from nexusd.planner.grounding import Services


def wait_for_plan(
    layout: RepoLayout,
    config: Config,
    request: Path,
    *,
    timeout: float,
    services: Callable[[], Services],
) -> PlanWait:
    """The request's response within `timeout`, or where it will appear when still pending."""
    try:
        answer = wait_for_answer(
            layout, config, request, timeout=timeout, services=services, bound_here=True
        )
    except AnswerPending as pending:
        note = f"{pending.message}; {pending.hint}"
        return PlanWait(pending.response, "pending", pending.by, note)
    return PlanWait(answer.response, answer.status, answer.by)


def daemon_side() -> DaemonSide:
    """The daemon's side of the API, for the loopback server and `nexusd mcp`."""
    return DaemonSide(running_pid=running_pid, wait_for_plan=wait_for_plan, describe=describe)
