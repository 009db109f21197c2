"""The librarian's optional model: it proposes search queries and reranks the code found.

With the librarian routed to `offline` (the default) nothing is asked: no query is added
and the code index's order stands. Any failure does the same, so retrieval never waits on a
model it does not need and never loses what the index found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from nexusd.config import Config
from nexusd.errors import NexusError
from nexusd.models.answers import parse_json_answer
from nexusd.models.budget import current_budget
from nexusd.models.registry import Message
from nexusd.models.reliability import BREAKERS, BreakerBoard
from nexusd.models.routed import RoutedModel
from nexusd.models.routing import limits, resolve_route
from nexusd.paths import RepoLayout

if TYPE_CHECKING:
    from nexusd.code.rank import FileHit

SYSTEM = (
    "You help search a code repository and its notes. Given a goal, propose short keyword "
    'queries (2-6 words each) that find the relevant files and lessons. Answer {"queries": [...]}.'
)


RERANK_SYSTEM = (
    "You locate the code a software request is about. Given the request and candidate files "
    "(each with its best functions), list the paths most likely to need changing, best first, "
    'using only the given paths. Answer {"files": ["path", ...]}.'
)
# The reason a file the model picked leads with, before its rank (`… ranks it #1`).
RERANKED = "the librarian model ranks it"
# What the model reads of the request and of each candidate: enough to judge, cheap to send.
MAX_REQUEST_CHARS = 3000
MAX_CANDIDATES = 10


def _model(
    layout: RepoLayout, config: Config, breakers: BreakerBoard, sleep: Callable[[float], None]
) -> RoutedModel | None:
    """The librarian's routed model, or None when it is offline or misconfigured."""
    try:
        route = resolve_route(config, "librarian")
        if route.offline:
            return None
        lim = limits(config)
        deadline_s = min(lim.timeout_s, route.provider.timeout_s)
        budget = current_budget()
        if budget is not None:
            if budget.spent():
                return None  # the answer's time is gone: the index's order stands
            # Reranking is optional: it may use a third of what is left, never the
            # architect's share of the request's model budget.
            deadline_s = min(deadline_s, budget.left() / 3)
        return RoutedModel(
            layout,
            route,
            deadline_s=deadline_s,
            max_retries=0,
            breakers=breakers,
            sleep=sleep,
        )
    except NexusError:
        return None


def librarian_configured(config: Config) -> bool:
    """True when a model (not `offline`) is routed to the librarian role."""
    try:
        return not resolve_route(config, "librarian").offline
    except NexusError:
        return False


def _candidates(hits: tuple[FileHit, ...]) -> str:
    lines = []
    for hit in hits[:MAX_CANDIDATES]:
        units = ", ".join(u.qualname for u in hit.units[:3])
        lines.append(f"- {hit.path}" + (f" ({units})" if units else ""))
    return "\n".join(lines)


def rerank_files(
    *,
    layout: RepoLayout,
    config: Config,
    request_text: str,
    hits: tuple[FileHit, ...],
    breakers: BreakerBoard = BREAKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[FileHit, ...] | None:
    """`hits` reordered by the librarian's model (its picks first), or None when not asked.

    Only paths among the first candidates count; the rest keep the index's order, so a
    model that answers nothing useful changes nothing.
    """
    if len(hits) < 2:
        return None
    model = _model(layout, config, breakers, sleep)
    if model is None:
        return None
    request = request_text.strip()[:MAX_REQUEST_CHARS]
    messages = (
        Message("system", RERANK_SYSTEM),
        Message("user", f"Request:\n{request}\n\nCandidate files:\n{_candidates(hits)}"),
    )
    text, _ = model.ask(messages, "rerank")
    answer, _ = parse_json_answer(text or "")
    picked = answer.get("files") if answer else None
    if not isinstance(picked, list):
        return None
    known = {hit.path: hit for hit in hits[:MAX_CANDIDATES]}
    order = [p for p in dict.fromkeys(x for x in picked if isinstance(x, str)) if p in known]
    if not order:
        return None
    chosen = [
        replace(known[p], reasons=(f"{RERANKED} #{n}", *known[p].reasons))
        for n, p in enumerate(order, start=1)
    ]
    return (*chosen, *(hit for hit in hits if hit.path not in order))


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
    model = _model(layout, config, breakers, sleep)
    if model is None:
        return ()
    messages = (Message("system", SYSTEM), Message("user", f"Goal: {goal.strip()}"))
    text, _ = model.ask(messages, "expand")
    answer, _ = parse_json_answer(text or "")
    queries = answer.get("queries") if answer else None
    if not isinstance(queries, list):
        return ()
    clean = [" ".join(q.split()) for q in queries if isinstance(q, str) and q.strip()]
    return tuple(dict.fromkeys(q for q in clean if len(q) <= 200))[:max_queries]
