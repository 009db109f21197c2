"""A model's answer read as JSON, with code fences and chatter around the object tolerated."""

from __future__ import annotations

import json
import re
from typing import Any


def parse_json_answer(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The JSON object in a model's answer (code fences and chatter tolerated), or errors."""
    candidates = [text.strip()]
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "empty answer"
    for candidate in candidates:
        if not candidate:
            continue
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError as exc:
            last_error = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
            continue
        if isinstance(value, dict):
            return value, []
        last_error = f"the top level must be a JSON object, not {type(value).__name__}"
    return None, [f"answer: {last_error}"]
