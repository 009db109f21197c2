"""Text cut to fit a model's context: its start and its end kept, the cut said in place."""

from __future__ import annotations


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
