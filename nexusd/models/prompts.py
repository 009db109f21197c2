"""Prompt assembly from ranked context within a token budget, and the prompt log.

The context bundle arrives as ContextItems (git facts, artifacts with symbol
summaries, memory hits with citations, last checks and reflections, the
previous cycle). The highest-ranked items go in first; when the budget runs
out the item at the edge is shortened and everything ranked lower is cut.
Every exact prompt sent is kept under `<git-dir>/nexus/logs/prompts/`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nexusd.atomic import atomic_write_text
from nexusd.models.base import Message
from nexusd.paths import RepoLayout

KEEP_PROMPTS = 200
_MIN_TRUNCATED_TOKENS = 48
_SEQ = itertools.count()


@dataclass(frozen=True)
class ContextItem:
    """One piece of context; `rank` is importance: the lowest-ranked are cut first."""

    kind: str
    title: str
    text: str
    rank: float


@dataclass(frozen=True)
class Prompt:
    """The messages to send and what of the context made it in."""

    messages: tuple[Message, ...]
    included: tuple[str, ...]
    dropped: tuple[str, ...]
    truncated: tuple[str, ...]
    tokens: int


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about four characters per token)."""
    return (len(text) + 3) // 4


def fit_context(
    items: Sequence[ContextItem], budget_tokens: int
) -> tuple[list[ContextItem], list[str], list[str]]:
    """Items that fit the budget by rank (highest first), the titles dropped and truncated."""
    ordered = sorted(enumerate(items), key=lambda pair: (-pair[1].rank, pair[0]))
    kept: list[ContextItem] = []
    dropped: list[str] = []
    truncated: list[str] = []
    left = budget_tokens
    for position, (_, item) in enumerate(ordered):
        cost = estimate_tokens(_render_item(item))
        if cost <= left:
            kept.append(item)
            left -= cost
            continue
        overhead = estimate_tokens(_render_item(ContextItem(item.kind, item.title, "", 0)))
        room = left - overhead - 2
        if room >= _MIN_TRUNCATED_TOKENS:
            short = item.text[: room * 4].rstrip() + "\n…"
            kept.append(ContextItem(item.kind, item.title, short, item.rank))
            truncated.append(item.title)
        else:
            dropped.append(item.title)
        dropped.extend(rest.title for _, rest in ordered[position + 1 :])
        break
    return kept, dropped, truncated


def _render_item(item: ContextItem) -> str:
    return f"### [{item.kind}] {item.title}\n{item.text.strip()}\n"


def build_prompt(
    *, system: str, task: str, instructions: str, items: Sequence[ContextItem], budget_tokens: int
) -> Prompt:
    """System + user messages: the task, then as much ranked context as fits, then instructions."""
    fixed = estimate_tokens(system) + estimate_tokens(task) + estimate_tokens(instructions) + 16
    kept, dropped, truncated = fit_context(items, max(0, budget_tokens - fixed))
    context = "\n".join(_render_item(item) for item in kept) or "(no context available)\n"
    user = f"{task.strip()}\n\n## Context\n\n{context}\n## Instructions\n\n{instructions.strip()}\n"
    messages = (Message("system", system.strip()), Message("user", user))
    return Prompt(
        messages=messages,
        included=tuple(item.title for item in kept),
        dropped=tuple(dropped),
        truncated=tuple(truncated),
        tokens=estimate_tokens(system) + estimate_tokens(user),
    )


def prompts_dir(layout: RepoLayout) -> Path:
    """Where exact prompts are kept: `<git-dir>/nexus/logs/prompts/`."""
    return layout.logs_dir / "prompts"


def save_prompt(
    layout: RepoLayout,
    *,
    role: str,
    planner: str,
    messages: Sequence[Message],
    attempt: str = "first",
    dropped: Sequence[str] = (),
) -> Path:
    """Write the exact messages sent to a model, atomically; prune to the newest files."""
    folder = prompts_dir(layout)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{stamp}_{next(_SEQ):04d}_{role}_{attempt}.json"
    record = {
        "role": role,
        "planner": planner,
        "attempt": attempt,
        "dropped_context": list(dropped),
        "messages": [{"role": m.role, "content": m.content} for m in messages],
    }
    atomic_write_text(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    _prune(folder)
    return path


def _prune(folder: Path) -> None:
    files = sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))
    for old in files[:-KEEP_PROMPTS]:
        old.unlink(missing_ok=True)
