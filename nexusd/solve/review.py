"""The critic: why did it fail, and what should change. A model when routed, rules otherwise.

`analyze_error` reads stderr the way a person skims it (the last exception
line, the kind of failure); `review_with_llm` asks the critic's routed model
for a short diagnosis of failing checks or runs and falls back to those rules.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nexusd.config import Config
from nexusd.errors import NexusError
from nexusd.models.prompts import ContextItem, build_prompt
from nexusd.models.reliability import BREAKERS, BreakerBoard
from nexusd.models.routed import RoutedModel
from nexusd.models.routing import limits, resolve_route
from nexusd.models.telemetry import Usage
from nexusd.paths import RepoLayout

SYSTEM = (
    "You are the critic. Given a goal and the output of what failed, say in two to five "
    "sentences what caused the failure and what exactly to change next. Quote the error "
    "line. Do not write the whole program."
)

_ERROR_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b:?\s*(.*)$")
_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')


@dataclass(frozen=True)
class Reflection:
    """A diagnosis of a failure and who wrote it."""

    text: str
    planner: str
    usage: Usage | None = None
    notes: tuple[str, ...] = ()


def analyze_error(stderr: str, exit_code: int | None, timed_out: bool = False) -> str:
    """A rule-based diagnosis from stderr: the error line, where, and what kind of fix."""
    if timed_out:
        return "The run was killed at the time limit: look for an endless loop or blocking input."
    lines = [line for line in stderr.splitlines() if line.strip()]
    error = next((m for line in reversed(lines) if (m := _ERROR_LINE.match(line))), None)
    places = _LOCATION.findall(stderr)
    where = f" at line {places[-1][1]}" if places else ""
    if error is None:
        tail = lines[-1].strip() if lines else "no output on stderr"
        return f"The run exited with {exit_code}{where}; last stderr line: {tail}"
    kind, message = error.group(1), error.group(2).strip()
    advice = {
        "SyntaxError": "fix the syntax on that line before anything else",
        "IndentationError": "fix the indentation on that line",
        "NameError": "define or import the missing name before it is used",
        "ImportError": "use only the standard library, or fix the import",
        "ModuleNotFoundError": "use only the standard library, or fix the import",
        "AssertionError": "the result is wrong: recompute the value the assertion checks",
        "TypeError": "check the types and the number of arguments of the failing call",
        "AttributeError": "the object has no such attribute: check its type",
        "KeyError": "the key is missing: check the data or use .get",
        "IndexError": "an index is out of range: check the bounds",
        "ZeroDivisionError": "guard the division against zero",
        "MemoryError": "use less memory: stream or chunk the data",
    }.get(kind.rsplit(".", 1)[-1], "read the traceback from the bottom up and fix that call")
    return f"{kind}{where}: {message or '(no message)'} — {advice}."


def review_with_llm(
    *,
    layout: RepoLayout,
    config: Config,
    goal: str,
    failures: Sequence[ContextItem],
    fallback: str,
    breakers: BreakerBoard = BREAKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> Reflection:
    """The critic model's diagnosis of `failures`; `fallback` (rule-based) when it cannot."""
    try:
        route = resolve_route(config, "critic")
        if route.offline:
            return Reflection(fallback, "offline")
        lim = limits(config)
        model = RoutedModel(
            layout,
            route,
            deadline_s=lim.timeout_s,
            max_retries=lim.max_retries,
            breakers=breakers,
            sleep=sleep,
        )
    except NexusError as exc:
        return Reflection(fallback, "offline", notes=(f"critic unavailable: {exc.message}",))
    prompt = build_prompt(
        system=SYSTEM,
        task=f"# Goal\n\n{goal.strip()}",
        instructions="Diagnose the failure above and say what to change next.",
        items=failures,
        budget_tokens=lim.max_context_tokens,
    )
    text, reason = model.ask(prompt.messages, "review")
    if text is None or not text.strip():
        note = f"critic down: used the rule-based diagnosis ({reason or 'empty answer'})"
        return Reflection(fallback, "offline", model.usage, (note,))
    return Reflection(text.strip(), route.planner_name, model.usage)
