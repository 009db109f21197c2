"""Recognise an answer that only repeats the prompt: that is no answer at all.

Small base models, and chat models given the wrong template, often continue the
prompt instead of answering it. Such an "answer" must not become a plan, a
reflection or a program: it is treated like a model that did not answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nexusd.models.registry import Message

_MIN_CHARS = 20  # shorter answers ("ok", "yes") cannot be judged
_SENTENCE = re.compile(r"(?<=[.!?:])\s+")
_LEAD = 40


def _flat(text: str) -> str:
    return " ".join(text.split())


def echoes_prompt(answer: str, messages: Sequence[Message]) -> bool:
    """True when `answer` repeats the prompt instead of answering it.

    That is: the whole answer is a piece of what the model was told; or it repeats one of the system
    message's sentences (of 30+ characters); or it opens with the last request's opening.
    An answer that quotes code or a traceback from the prompt inside something new is not
    an echo.
    """
    said = _flat(answer)
    if len(said) < _MIN_CHARS:
        return False
    # What was said to the model: its own earlier answers (a repair round) do not count.
    prompt = _flat("\n".join(m.content for m in messages if m.role != "assistant"))
    if said in prompt:
        return True
    for msg in messages:
        if msg.role == "system":
            for sentence in _SENTENCE.split(_flat(msg.content)):
                if len(sentence) >= 30 and sentence in said:
                    return True
    users = [m for m in messages if m.role == "user"]
    if users:
        lead = _flat(users[-1].content)[:_LEAD]
        if len(lead) >= _MIN_CHARS and said.startswith(lead):
            return True
    return False
