"""`nexusd solve`: generate → run in the sandbox → reflect → retry → crystallize (seed 000, 2.2.3).

The builder role's model writes a whole program; the sandbox runs it; a failure's
stderr is diagnosed (critic model when routed, rules otherwise) and fed into the
next attempt, up to the retry limit. A success becomes a memory entry: the
problem, the errors met on the way, the final code and the number of attempts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nexusd.config import Config
from nexusd.errors import ConfigError, NexusError
from nexusd.memory.writes import add_memory
from nexusd.models.offline import CONFIGURE_HINT
from nexusd.models.prompts import ContextItem
from nexusd.models.registry import Message
from nexusd.models.reliability import BREAKERS, BreakerBoard
from nexusd.models.routed import RoutedModel, merge_usage
from nexusd.models.routing import limits, resolve_route
from nexusd.models.telemetry import Usage, record
from nexusd.paths import RepoLayout
from nexusd.planner.clip import task_within
from nexusd.solve.attempt import Runner, RunResult, language_file, sandbox_runner
from nexusd.solve.review import analyze_error, review_with_llm

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_STDERR_TAIL = 2000


@dataclass(frozen=True)
class Attempt:
    """One generated program, how its run ended, and the diagnosis of a failure."""

    number: int
    code: str
    result: RunResult
    reflection: str | None = None


@dataclass(frozen=True)
class SolveResult:
    """The loop's outcome; `memory_text` is the crystallized entry when it succeeded."""

    task: str
    language: str
    success: bool
    attempts: tuple[Attempt, ...]
    planner: str
    final_code: str | None = None
    memory_text: str | None = None
    memory_saved: bool = False
    usage: Usage | None = None
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain values for `--json`."""
        return {
            "task": self.task,
            "language": self.language,
            "success": self.success,
            "planner": self.planner,
            "final_code": self.final_code,
            "memory_text": self.memory_text,
            "memory_saved": self.memory_saved,
            "usage": self.usage.as_dict() if self.usage else None,
            "notes": list(self.notes),
            "attempts": [
                {
                    "number": a.number,
                    "code": a.code,
                    "exit_code": a.result.exit_code,
                    "timed_out": a.result.timed_out,
                    "stderr": a.result.stderr[-_STDERR_TAIL:],
                    "backend": a.result.backend,
                    "reflection": a.reflection,
                }
                for a in self.attempts
            ],
        }


def extract_code(text: str, language: str) -> str:
    """The program in a model's answer: the fenced block for `language`, else the first."""
    blocks = _FENCE.findall(text)
    for tag, body in blocks:
        if tag.lower() in (language, "py" if language == "python" else language):
            return str(body).strip() + "\n"
    if blocks:
        return str(blocks[0][1]).strip() + "\n"
    return text.strip() + "\n"


def builder_messages(
    task: str,
    language: str,
    attempts: tuple[Attempt, ...],
    notes: Sequence[str] = (),
) -> list[Message]:
    """The builder's prompt: the task, what failed so far (every distinct error), the last
    attempts with their errors and diagnosis, and why the last try gave no program."""
    system = (
        f"You write one complete, runnable {language} program that solves the task and exits "
        "with status 0 only when it works (use assertions to check the result). Use only the "
        f"standard library. Answer with the program in one ```{language} fenced block."
    )
    user = [f"# Task\n\n{task.strip()}"]
    learned = failed_approaches(attempts)
    if len(learned) > 1:
        user.append("\n# What failed so far\n\n" + "\n".join(f"- {x}" for x in learned))
    for attempt in attempts[-3:]:
        user.append(
            f"\n# Attempt {attempt.number} failed (exit {attempt.result.exit_code}"
            f"{', timed out' if attempt.result.timed_out else ''})\n\n```{language}\n"
            f"{attempt.code.strip()}\n```\n\nstderr:\n```\n"
            f"{attempt.result.stderr[-_STDERR_TAIL:].strip()}\n```\n\n"
            f"Diagnosis: {attempt.reflection}"
        )
    user.extend(f"\nNote: {note}" for note in notes)
    if attempts or notes:
        user.append("\nWrite the corrected, complete program; do not repeat a failed one.")
    return [Message("system", system), Message("user", "\n".join(user))]


def failed_approaches(attempts: Sequence[Attempt]) -> list[str]:
    """Each distinct failure met so far, first seen first (what a retry must not repeat)."""
    seen: list[str] = []
    for a in attempts:
        if a.result.passed:
            continue
        found = analyze_error(
            a.result.stderr or a.result.error, a.result.exit_code, a.result.timed_out
        )
        if found not in seen:
            seen.append(found)
    return seen


def unsolved_entry(task: str, language: str, attempts: Sequence[Attempt]) -> str:
    """The memory entry for a task not solved: what was tried and how each failed."""
    first = task.strip().splitlines()[0][:120]
    lines = [
        f"Not solved: “{first}” in {language}, {len(attempts)} attempt(s) (nexusd solve).",
        f"Problem: {' '.join(task.split())}",
    ]
    lines += [f"Failed: {e}" for e in failed_approaches(attempts)]
    last = attempts[-1]
    if last.reflection:
        lines.append(f"Last diagnosis: {' '.join(last.reflection.split())[:500]}")
    return "\n".join(lines) + "\n"


def crystallize(task: str, language: str, attempts: tuple[Attempt, ...]) -> str:
    """The memory entry for a solved task: problem, errors met, final code, attempts."""
    final = attempts[-1]
    errors = [
        analyze_error(a.result.stderr, a.result.exit_code, a.result.timed_out)
        for a in attempts[:-1]
    ]
    first = task.strip().splitlines()[0][:120]
    lines = [
        f"Solved “{first}” in {language} after {len(attempts)} attempt(s) (nexusd solve).",
        f"Problem: {' '.join(task.split())}",
    ]
    lines += [f"Error met: {e}" for e in errors] or ["Worked on the first attempt."]
    lines += ["Final code:", f"```{language}", final.code.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def _save_memory(
    layout: RepoLayout, text: str, language: str, category: str = "solution"
) -> tuple[bool, str | None]:
    try:
        add_memory(layout, text, category=category, tags=("solve", language))
    except (NexusError, OSError) as exc:
        return False, f"could not save the solution to memory: {exc}"
    return True, None


def solve(
    *,
    layout: RepoLayout,
    config: Config,
    task: str,
    language: str = "python",
    max_retries: int = 10,
    runner: Runner | None = None,
    save: bool = True,
    breakers: BreakerBoard = BREAKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> SolveResult:
    """Run the loop for `task` (at most 1 + max_retries attempts); see the module docstring."""
    language_file(language)
    if not task.strip():
        # Nothing to solve: asking a model and running what it writes would be a guess.
        raise NexusError("the task is empty", hint="say what the program must do")
    route = resolve_route(config, "builder")
    if route.offline:
        raise ConfigError(
            "nexusd solve needs a language model, but the builder role uses the offline planner",
            hint=CONFIGURE_HINT,
        )
    lim = limits(config)
    model = RoutedModel(
        layout,
        route,
        deadline_s=lim.timeout_s * (max_retries + 1),
        # The loop retries, and each retry changes something; the same call twice never.
        max_retries=0,
        breakers=breakers,
        sleep=sleep,
    )
    run = runner or sandbox_runner(config)
    timeout_s = float(config.sandbox.timeout)
    attempts: tuple[Attempt, ...] = ()
    notes: list[str] = []
    # A pasted issue must leave the builder's prompt room for the failed attempts.
    prompt_task, cut = task_within(task.strip(), lim.max_context_tokens)
    if cut:
        notes.append(
            f"the task is longer than its share of planner.max_context_tokens"
            f" ({lim.max_context_tokens}): {cut} characters of its middle were left out"
        )
    critic_usage: Usage | None = None
    ran: set[str] = set()  # the programs already run: the same code is never run twice
    pending: list[str] = []  # why the last try produced nothing, told to the next one
    temperature = route.temperature
    for number in range(1, max_retries + 2):
        messages = builder_messages(prompt_task, language, attempts, pending)
        text, reason = model.ask(
            messages, f"try{number}", timeout_s=lim.timeout_s, temperature=temperature
        )
        # Whatever goes wrong, the next try differs: more varied sampling, and a note.
        temperature = min(1.0, temperature + 0.3)
        if text is None and model.echoed and extract_code(model.echo_text, language) in ran:
            text = model.echo_text  # a failed program written again: said so just below
        if text is None:
            notes.append(f"try {number}: the builder model failed: {reason}")
            retryable = model.last_error is not None and model.last_error.retryable
            if not retryable:
                break
            pending = [
                "your last answer only repeated the prompt: answer with the program itself"
                if model.echoed
                else "your last answer did not arrive in time: write a shorter program"
            ]
            continue
        code = extract_code(text, language)
        if code in ran:
            notes.append(f"try {number}: the model wrote a program it had already tried")
            pending = ["you wrote a program that already failed: write a different one"]
            continue
        ran.add(code)
        pending = []
        result = run(code, language, timeout_s)
        if result.passed:
            attempts += (Attempt(number, code, result),)
            break
        rules = analyze_error(result.stderr or result.error, result.exit_code, result.timed_out)
        review = review_with_llm(
            layout=layout,
            config=config,
            goal=task,
            failures=[
                ContextItem("code", f"attempt {number}", code, 2.0),
                ContextItem("stderr", f"attempt {number} stderr", result.stderr or rules, 3.0),
            ],
            fallback=rules,
            breakers=breakers,
            sleep=sleep,
        )
        critic_usage = merge_usage(critic_usage, review.usage)
        notes.extend(review.notes)
        attempts += (Attempt(number, code, result, review.text),)
        if result.error:
            notes.append(f"the sandbox failed: {result.error}")
            break
    success = bool(attempts) and attempts[-1].result.passed
    memory_text = crystallize(task, language, attempts) if success else None
    saved = False
    if memory_text is not None and save:
        saved, why = _save_memory(layout, memory_text, language)
        notes.extend([why] if why else [])
    elif attempts and save and not attempts[-1].result.error:
        # Not solved, but each failed run taught something: keep it for the next time.
        memory_text = unsolved_entry(task, language, attempts)
        saved, why = _save_memory(layout, memory_text, language, category="lesson")
        notes.extend([why] if why else [])
    usage = merge_usage(model.usage, critic_usage)
    record(
        layout,
        {
            "event": "solve",
            "planner": route.planner_name,
            "ok": success,
            "fallback": False,
            "attempts": len(attempts),
            "language": language,
            "usage": usage.as_dict() if usage else None,
        },
    )
    return SolveResult(
        task=task,
        language=language,
        success=success,
        attempts=attempts,
        planner=route.planner_name,
        final_code=attempts[-1].code if success else None,
        memory_text=memory_text,
        memory_saved=saved,
        usage=usage,
        notes=tuple(notes),
    )
