"""The backend the last check run used and why, kept for `nexusd status`.

`backend: auto` falls back from docker to bwrap or a plain subprocess when the
engine or an image is missing. That used to be said only in the log; the run
now records its choice in `<nexus>/state/sandbox.json` (atomically, each run),
so `nexusd status` shows the fallback every time, daemon running or not.
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from typing import Any

from nexusd.atomic import atomic_write_text
from nexusd.paths import RepoLayout
from nexusd.sandbox.probe import Choice

RECORD_FILE = "sandbox.json"


def record_choice(layout: RepoLayout, choice: Choice, configured: str) -> None:
    """Publish this run's backend, reason and fallback note (a full disk only loses it)."""
    data = {
        "configured": configured,
        "backend": choice.backend,
        "isolated": choice.backend != "subprocess",
        "reason": choice.reason,
        "fallback": choice.fallback or None,
        "at": datetime.now(tz=UTC).isoformat(timespec="seconds"),
    }
    with contextlib.suppress(OSError):
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        atomic_write_text(layout.state_dir / RECORD_FILE, text)


def read_choice(layout: RepoLayout) -> dict[str, Any] | None:
    """The last run's record, or None when no check ran yet (or it is unreadable)."""
    try:
        data = json.loads((layout.state_dir / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def status_line(data: dict[str, Any]) -> str:
    """`bwrap (FALLBACK: …)` or `docker`: the sandbox row of `nexusd status`."""
    head = f"{data.get('backend')} (configured {data.get('configured')}, last run {data.get('at')})"
    fallback = data.get("fallback")
    return f"{head}\n    FALLBACK: {fallback}" if fallback else head
