"""Checkpoint values: ids that sort by time, refs, and the trailers they carry."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

REF_PREFIX = "refs/nexus/checkpoints/"
NOTES_REF = "refs/notes/nexus"
REASONS = frozenset({"request", "commit", "manual", "pre-restore"})
ID_RE = re.compile(r"\b(\d{8}T\d{6}Z-[0-9a-f]{6})\b")

# Trailer keys, in the order they are written.
TRAILER_KEYS = (
    "Nexus-Reason",
    "Nexus-Cycle",
    "Nexus-Request",
    "Nexus-Branch",
    "Nexus-Head",
    "Nexus-State",
    "Nexus-Bytes",
    "Nexus-Id",
)
# `Nexus-Bytes: as-is`: the files git converts (line endings, `ident`, encodings) are held
# with the bytes they had on disk, and a restore writes them back so; checkpoints made
# before it hold git's cleaned blobs, which a restore smudges like a checkout.
BYTES_KEY = "Nexus-Bytes"
AS_IS = "as-is"
# Trailers counting what a snapshot left out (oversized, nested repositories, vanished).
LEFT_OUT = ("Nexus-Skipped", "Nexus-Skipped-Repos", "Nexus-Vanished")


def make_id(when: datetime, bump: int = 0) -> str:
    """`YYYYmmddTHHMMSSZ-xxxxxx`: the suffix is the microsecond in hex, so ids sort by time."""
    when = when.astimezone(UTC)
    return f"{when:%Y%m%dT%H%M%SZ}-{(when.microsecond + bump) % 0x1000000:06x}"


def id_time(checkpoint_id: str) -> datetime:
    """The creation time encoded in an id (second precision plus the microsecond suffix)."""
    stamp, _, suffix = checkpoint_id.partition("-")
    base = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    micro = int(suffix, 16) if suffix else 0
    return base.replace(microsecond=min(micro, 999_999))


def is_valid_id(text: str) -> bool:
    """True for a well-formed checkpoint id."""
    return ID_RE.fullmatch(text) is not None


def format_message(subject: str, trailers: Mapping[str, str], body: str | None = None) -> str:
    """A commit message: subject, optional body, then `Key: value` trailers (one line each)."""
    lines = [subject.splitlines()[0] if subject.strip() else "nexusd checkpoint", ""]
    if body and body.strip():
        lines += [body.strip(), ""]
    for key, value in trailers.items():
        flat = " ".join(str(value).split())
        if flat:
            lines.append(f"{key}: {flat}")
    return "\n".join(lines) + "\n"


def parse_trailers(message: str) -> dict[str, str]:
    """The `Nexus-*` trailers of a commit message (last paragraph, `Key: value` lines)."""
    out: dict[str, str] = {}
    # Only the last paragraph, and never the subject: a message given with `-m` may hold
    # `Nexus-Cycle: 9`-like lines of its own, which are text, not what the checkpoint is.
    paragraphs = re.split(r"\n[ \t]*\n", message.strip())
    if len(paragraphs) < 2:
        return out
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Nexus-") and " " not in key:
            out[key] = value.strip()
    return out


@dataclass(frozen=True)
class Checkpoint:
    """One snapshot of a working tree, stored at `refs/nexus/checkpoints/<id>`."""

    id: str
    commit: str
    tree: str
    created_at: datetime
    reason: str
    parent: str | None = None
    subject: str = ""
    trailers: Mapping[str, str] = field(default_factory=dict)
    # (path, why) of each path the snapshot left out; only known to the run that made it
    # (the commit keeps just the counts, in the LEFT_OUT trailers).
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def ref(self) -> str:
        """The full ref name."""
        return REF_PREFIX + self.id

    @property
    def restore_command(self) -> str:
        """The command that brings this checkpoint back."""
        return f"nexusd checkpoint restore {self.id}"

    @property
    def cycle(self) -> str | None:
        """The Template A cycle this checkpoint belongs to, if any."""
        return self.trailers.get("Nexus-Cycle")

    @property
    def branch(self) -> str | None:
        """The branch checked out when it was made (None when detached or unknown)."""
        value = self.trailers.get("Nexus-Branch")
        return None if value in (None, "(detached)") else value

    @property
    def state(self) -> str | None:
        """An operation in progress when it was made (`merge`, `rebase`, …), if any."""
        return self.trailers.get("Nexus-State")

    @property
    def as_is(self) -> bool:
        """True when its files hold the bytes they had on disk (see BYTES_KEY)."""
        return self.trailers.get(BYTES_KEY) == AS_IS

    @property
    def left_out_notes(self) -> list[str]:
        """What the snapshot left out, as its trailers count it (empty when nothing)."""
        return [self.trailers[key] for key in LEFT_OUT if self.trailers.get(key)]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "id": self.id,
            "ref": self.ref,
            "commit": self.commit,
            "tree": self.tree,
            "parent": self.parent,
            "time": self.created_at.isoformat(),
            "reason": self.reason,
            "cycle": self.cycle,
            "branch": self.branch,
            "state": self.state,
            "subject": self.subject,
            "restore_command": self.restore_command,
        }
