"""Optional query expansion for the librarian: a small model proposes search queries.

With the librarian routed to `offline` (the default) nothing is asked and no
query is added; any failure also yields no queries, so retrieval never waits
on a model it does not need.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from nexusd.config import Config
from nexusd.errors import NexusError
from nexusd.paths import RepoLayout
from nexusd.planner.llm_schema import parse_json_answer
from nexusd.planner.providers import Message
from nexusd.planner.reliability import BREAKERS, BreakerBoard
from nexusd.planner.routed import RoutedModel
from nexusd.planner.routing import limits, resolve_route

SYSTEM = (
    "You help search a code repository and its notes. Given a goal, propose short keyword "
    'queries (2-6 words each) that find the relevant files and lessons. Answer {"queries": [...]}.'
)


def expand_queries(
    *,
    layout: RepoLayout,
    config: Config,
    goal: str,
    max_queries: int = 3,
    breakers: BreakerBoard = BREAKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[str, ...]:
    """Up to `max_queries` extra search queries for `goal` (none when offline or failing)."""
    try:
        route = resolve_route(config, "librarian")
        if route.offline:
            return ()
        lim = limits(config)
        model = RoutedModel(
            layout,
            route,
            deadline_s=min(lim.timeout_s, route.provider.timeout_s),
            max_retries=0,
            breakers=breakers,
            sleep=sleep,
        )
    except NexusError:
        return ()
    messages = (Message("system", SYSTEM), Message("user", f"Goal: {goal.strip()}"))
    text, _ = model.ask(messages, "expand")
    answer, _ = parse_json_answer(text or "")
    queries = answer.get("queries") if answer else None
    if not isinstance(queries, list):
        return ()
    clean = [" ".join(q.split()) for q in queries if isinstance(q, str) and q.strip()]
    return tuple(dict.fromkeys(q for q in clean if len(q) <= 200))[:max_queries]
