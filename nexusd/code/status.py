"""What `nexusd code status` and the daemon's status report about the code index."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class UpdateReport:
    """What one update did."""

    parsed: int  # (path, blob) pairs parsed: new or changed files
    removed: int
    unchanged: int
    syntax_errors: int
    skipped: int
    seconds: float


@dataclass(frozen=True)
class CodeStatus:
    """The state of a code index."""

    index_uri: str
    files: int
    units: int
    languages: Mapping[str, int]
    statuses: Mapping[str, int]
    problems: tuple[str, ...]  # one line per file that did not parse cleanly (SHOWN_PROBLEMS)
    skipped: Mapping[str, int]  # reason → files
    complete: bool
    progress: tuple[int, int] | None = None
    last_update: UpdateReport | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    skipped_files: tuple[str, ...] = ()  # `path: reason`, the first SHOWN_SKIPPED
    problems_total: int = 0  # files that did not parse cleanly, all of them
    generated: int = 0  # indexed files `.gitattributes` marks linguist-generated

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        data = asdict(self)
        data["progress"] = list(self.progress) if self.progress else None
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CodeStatus:
        """The inverse of `to_dict` (for answers from the daemon)."""
        last = data.get("last_update")
        progress = data.get("progress")
        return cls(
            index_uri=str(data["index_uri"]),
            files=int(data["files"]),
            units=int(data["units"]),
            languages=dict(data.get("languages") or {}),
            statuses=dict(data.get("statuses") or {}),
            problems=tuple(data.get("problems") or ()),
            skipped=dict(data.get("skipped") or {}),
            complete=bool(data.get("complete")),
            progress=(int(progress[0]), int(progress[1])) if progress else None,
            last_update=UpdateReport(**last) if isinstance(last, dict) else None,
            extra=dict(data.get("extra") or {}),
            skipped_files=tuple(data.get("skipped_files") or ()),
            problems_total=int(data.get("problems_total") or len(data.get("problems") or ())),
            generated=int(data.get("generated") or 0),
        )


SHOWN_SKIPPED = 50
SHOWN_PROBLEMS = 50
# What a user asked for (excludes) is listed after what nexusd decided on its own.
_ASKED = "excluded by code.exclude"


def skipped_lines(skipped: Mapping[str, str]) -> tuple[str, ...]:
    """`path: reason` for the first SHOWN_SKIPPED skipped files, nexusd's own reasons first;
    a name that is not UTF-8 shown with escapes."""
    order = sorted(skipped.items(), key=lambda kv: (kv[1].startswith(_ASKED), kv[0]))
    return tuple(
        f"{path.encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace')}: {why}"
        for path, why in order[:SHOWN_SKIPPED]
    )


def skipped_summary(skipped: Mapping[str, str]) -> dict[str, int]:
    """reason → how many files, most common first (reasons lose their per-file numbers)."""
    reasons = Counter(reason.split(":")[0] for reason in skipped.values())
    return dict(reasons.most_common())
