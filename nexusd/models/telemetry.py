"""Model usage and phase timings as JSON lines, and their summary for `nexusd stats`.

One line per event in `<git-dir>/nexus/logs/telemetry.jsonl`, appended
with a single write so concurrent writers never interleave within a line.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import threading
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nexusd.paths import RepoLayout
from nexusd.readonly import is_read_only

ROTATE_BYTES = 10 * 1024 * 1024
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Usage:
    """Model usage of one planning step: which model, how many tokens, how many retries."""

    provider: str
    model: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    calls: int = 0
    duration_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain values for front matter and JSON."""
        return asdict(self)


def telemetry_file(layout: RepoLayout) -> Path:
    """`<git-dir>/nexus/logs/telemetry.jsonl` (per working tree)."""
    return layout.logs_dir / "telemetry.jsonl"


def record(layout: RepoLayout, event: Mapping[str, Any]) -> None:
    """Append one event (a timestamp is added); never raises on a full or read-only disk."""
    if is_read_only():
        return  # `nexusd plan --stdout` writes nothing
    line = json.dumps(
        {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), **event},
        ensure_ascii=False,
        default=str,
        separators=(",", ":"),
    )
    path = telemetry_file(layout)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _LOCK:
            if path.exists() and path.stat().st_size > ROTATE_BYTES:
                path.replace(path.with_suffix(".jsonl.1"))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (line + "\n").encode("utf-8"))
            finally:
                os.close(fd)
    except OSError:
        # Telemetry must never fail a plan.
        return


def read_events(layout: RepoLayout) -> tuple[list[dict[str, Any]], int]:
    """Every readable event (rotated file first) and the number of unreadable lines: not
    JSON, or an event that cannot be summed (`_sound`)."""
    events: list[dict[str, Any]] = []
    bad = 0
    main = telemetry_file(layout)
    for path in (main.with_suffix(".jsonl.1"), main):
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(value, dict) and _sound(value):
                events.append(value)
            else:
                bad += 1
    return events, bad


def _sound(event: Mapping[str, Any]) -> bool:
    """Whether a (possibly hand-edited or torn) event can be summed: `phases` and `usage`
    are mappings when present and no number is NaN, infinite or past 64 bits (which ended
    the summary with a traceback, or printed `NaN`, which is not JSON)."""
    if any(k in event and not isinstance(event[k], Mapping) for k in ("phases", "usage")):
        return False

    def finite(value: Any) -> bool:
        if isinstance(value, float):
            return math.isfinite(value)
        if isinstance(value, int):
            return abs(value) < 2**63  # float() of a longer one raises
        if isinstance(value, Mapping):
            return all(finite(v) for v in value.values())
        if isinstance(value, list):
            return all(finite(v) for v in value)
        return True

    return finite(event)


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": 0.0, "p95": 0.0, "max": 0.0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def summarize(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals, per-planner usage and latency, and per-phase timings."""
    planners: dict[str, dict[str, Any]] = {}
    durations: dict[str, list[float]] = {}
    phases: dict[str, list[float]] = {}
    totals = {"events": 0, "calls": 0, "fallbacks": 0, "tokens_in": 0, "tokens_out": 0}
    for event in events:
        totals["events"] += 1
        for name, ms in (event.get("phases") or {}).items():
            phases.setdefault(str(name), []).append(_num(ms))
        usage = event.get("usage")
        if not isinstance(usage, Mapping):
            continue
        key = str(event.get("planner") or usage.get("provider") or "unknown")
        row = planners.setdefault(
            key,
            {"requests": 0, "calls": 0, "failed": 0, "fallbacks": 0, "retries": 0}
            | {"tokens_in": 0, "tokens_out": 0},
        )
        row["requests"] += 1
        row["calls"] += int(_num(usage.get("calls")))
        row["retries"] += int(_num(usage.get("retries")))
        row["tokens_in"] += int(_num(usage.get("tokens_in")))
        row["tokens_out"] += int(_num(usage.get("tokens_out")))
        row["failed"] += 0 if event.get("ok", True) else 1
        row["fallbacks"] += 1 if event.get("fallback") else 0
        durations.setdefault(key, []).append(_num(usage.get("duration_ms")))
        totals["calls"] += int(_num(usage.get("calls")))
        totals["fallbacks"] += 1 if event.get("fallback") else 0
        totals["tokens_in"] += int(_num(usage.get("tokens_in")))
        totals["tokens_out"] += int(_num(usage.get("tokens_out")))
    for key, row in planners.items():
        row["latency_ms"] = _spread(durations[key])
    return {
        "totals": totals,
        "planners": dict(sorted(planners.items())),
        "phases": {name: {"count": len(v), **_spread(v)} for name, v in sorted(phases.items())},
    }
