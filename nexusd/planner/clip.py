"""Text cut to fit a model's context: its start and its end kept, the cut said in place."""

from __future__ import annotations

# A request's or task's text takes at most this share of `planner.max_context_tokens` once
# the fixed parts of the prompt are counted (a pasted log must leave room for the context
# and, in `solve`, for the failed attempts), and never less than MIN_TASK_TOKENS.
TASK_SHARE = 0.5
MIN_TASK_TOKENS = 128
CHARS_PER_TOKEN = 4  # as `models.prompts.estimate_tokens` counts


def task_within(task: str, budget_tokens: int, reserved_tokens: int = 0) -> tuple[str, int]:
    """`task` within its share (TASK_SHARE) of what `budget_tokens` leaves after
    `reserved_tokens`, and how many characters were cut from its middle to fit."""
    tokens = max(MIN_TASK_TOKENS, int((budget_tokens - reserved_tokens) * TASK_SHARE))
    return clip_middle(task, tokens * CHARS_PER_TOKEN)


def clip_middle(text: str, max_chars: int) -> tuple[str, int]:
    """`text` in at most about `max_chars` characters, and how many were cut: its start and
    its end (where a traceback's exception and a log's last lines are), with the cut said
    where it was made."""
    if len(text) <= max_chars:
        return text, 0
    room = max(0, max_chars - 90)  # what the note in the middle takes
    head = text[: room * 2 // 3].rstrip()
    tail = text[len(text) - (room - room * 2 // 3) :].lstrip() if room else ""
    cut = len(text) - len(head) - len(tail)
    note = f"[… {cut} characters left out here, to fit the model's context …]"
    return f"{head}\n\n{note}\n\n{tail}".strip(), cut
