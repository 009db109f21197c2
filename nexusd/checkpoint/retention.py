"""Which checkpoints to keep: a pure policy, and the thin shell that applies it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nexusd.checkpoint.listing import drop, list_checkpoints
from nexusd.checkpoint.model import ID_RE, Checkpoint
from nexusd.checkpoint.notes import check_status, notes_for
from nexusd.config import Config
from nexusd.config.sections import Retention
from nexusd.paths import RepoLayout


@dataclass(frozen=True)
class RetentionPolicy:
    """Keep the last N, all from the last D days, one per day beyond, passed and named ones."""

    keep_last: int = 50
    keep_days: int = 14
    daily_beyond: bool = True
    keep_passed: bool = True
    keep_named: bool = True

    @classmethod
    def from_section(cls, section: Retention) -> RetentionPolicy:
        """Build from the `checkpoint.retention` config section."""
        return cls(
            keep_last=section.keep_last,
            keep_days=section.keep_days,
            daily_beyond=section.daily_beyond,
            keep_passed=section.keep_passed,
            keep_named=section.keep_named,
        )


@dataclass(frozen=True)
class GcReport:
    """The outcome of one retention run: what was kept (and why) and what was dropped."""

    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    reasons: Mapping[str, str] = field(default_factory=dict)
    dry_run: bool = False


def plan_gc(
    checkpoints: Sequence[Checkpoint],
    policy: RetentionPolicy,
    now: datetime,
    named_ids: Iterable[str] = (),
    passed_ids: Iterable[str] = (),
) -> tuple[list[Checkpoint], list[Checkpoint]]:
    """Split checkpoints into (keep, drop); pure: no git, no clock."""
    keep, dropped, _ = plan_gc_reasons(checkpoints, policy, now, named_ids, passed_ids)
    return keep, dropped


def plan_gc_reasons(
    checkpoints: Sequence[Checkpoint],
    policy: RetentionPolicy,
    now: datetime,
    named_ids: Iterable[str] = (),
    passed_ids: Iterable[str] = (),
) -> tuple[list[Checkpoint], list[Checkpoint], dict[str, str]]:
    """Like plan_gc, plus the first reason each kept checkpoint is kept."""
    ordered = sorted(checkpoints, key=lambda c: (c.created_at, c.id), reverse=True)
    named, passed = set(named_ids), set(passed_ids)
    cutoff = now - timedelta(days=policy.keep_days)
    reasons: dict[str, str] = {}
    days_seen: set[str] = set()
    for index, cp in enumerate(ordered):
        day = cp.created_at.astimezone(UTC).strftime("%Y-%m-%d")
        why = ""
        if index < policy.keep_last:
            why = "last"
        elif policy.keep_days > 0 and cp.created_at >= cutoff:
            why = "recent"
        elif policy.keep_named and cp.id in named:
            why = "named"
        elif policy.keep_passed and cp.id in passed:
            why = "passed"
        elif policy.daily_beyond and day not in days_seen:
            why = "daily"
        if policy.keep_named and cp.id in named and why in ("", "daily"):
            why = "named"
        if why:
            reasons[cp.id] = why
        if cp.created_at < cutoff and why in ("daily", "named", "passed", "last"):
            # Newest-first order: the first kept checkpoint of an old day represents it.
            days_seen.add(day)
    keep = [c for c in ordered if c.id in reasons]
    dropped = [c for c in ordered if c.id not in reasons]
    return keep[::-1], dropped[::-1], reasons


def named_in_responses(layout: RepoLayout, config: Config) -> set[str]:
    """Checkpoint ids named by any `*_plan_response.md` under the watched folders."""
    found: set[str] = set()
    for folder in config.watch.paths:
        base = layout.root / folder
        if not base.is_dir():
            continue
        for path in base.rglob("*response*.md"):
            found.update(_ids_in(path))
    return found


def _ids_in(path: Path) -> set[str]:
    try:
        return set(ID_RE.findall(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return set()


def run_gc(
    layout: RepoLayout, config: Config, dry_run: bool = False, now: datetime | None = None
) -> GcReport:
    """Apply the configured retention policy to this repository's checkpoints."""
    policy = RetentionPolicy.from_section(config.checkpoint.retention)
    checkpoints = list_checkpoints(layout)
    notes = notes_for(layout, [c.commit for c in checkpoints])
    passed = {c.id for c in checkpoints if check_status(notes.get(c.commit, {})) == "passed"}
    named = named_in_responses(layout, config)
    keep, doomed, reasons = plan_gc_reasons(
        checkpoints, policy, now or datetime.now(UTC), named, passed
    )
    if not dry_run:
        for cp in doomed:
            drop(layout, cp)
    return GcReport(
        kept=tuple(c.id for c in keep),
        dropped=tuple(c.id for c in doomed),
        reasons=reasons,
        dry_run=dry_run,
    )
