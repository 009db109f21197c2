"""The answer journal: a daily-note entry survives a daemon killed right after it answered.

The response and its daily-note line are two writes; a `kill -9` between them used to
lose the line for good, because after a restart the request is "already answered".
Before answering, the daemon writes a marker under `<nexus>/state/answering/` naming
the request and the response as it was; the marker goes once the line is written. A
marker left at start-up whose response changed since means the answer was written and
its line was not: the line is written then.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexusd.daemon.logs import log_event
from nexusd.daemon.worker import Answer, OutcomeLike
from nexusd.paths import RepoLayout
from nexusd.protocol.naming import response_path_for
from nexusd.protocol.reading import read_head
from nexusd.protocol.render import read_response_meta


@dataclass(frozen=True)
class RecoveredAnswer:
    """What a daily-note entry needs, read back from a response file."""

    response_path: Path
    status: str
    cycle: int | None
    title: str


def _read_head(path: Path) -> str | None:
    """The first bytes of a regular file, never through a link; None when there is none."""
    try:
        return read_head(path).decode("utf-8", "replace")
    except OSError:
        return None


def _stamp(response: Path) -> dict[str, Any]:
    """Which answer the response holds now (revision and request hash; empty when none)."""
    text = _read_head(response)
    meta = read_response_meta(text) if text else None
    if not meta:
        return {}
    return {"revision": meta.get("revision"), "sha256": meta.get("request_sha256")}


def recovered_answer(response: Path) -> RecoveredAnswer | None:
    """The daily-note facts of a response nexusd wrote (None when it is not one)."""
    text = _read_head(response)
    meta = read_response_meta(text) if text else None
    if not text or not meta:
        return None
    title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    cycle = meta.get("cycle")
    return RecoveredAnswer(
        response_path=response,
        status=str(meta.get("status") or "ok"),
        cycle=cycle if isinstance(cycle, int) and not isinstance(cycle, bool) else None,
        title=title,
    )


class AnswerJournal:
    """Markers of requests being answered, and the recovery of lines a crash lost."""

    def __init__(self, layout: RepoLayout, write_entry: Callable[[Any], None]) -> None:
        self.folder = layout.state_dir / "answering"
        self.write_entry = write_entry

    def _marker(self, request: Path) -> Path:
        digest = hashlib.sha256(os.fsencode(request)).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def wrap(self, answer: Answer) -> Answer:
        """`answer` with a marker held from before it answers until its daily line is written."""

        def run(path: Path) -> OutcomeLike:
            marker = self._marker(path)
            try:
                response = response_path_for(path)
            except ValueError:
                return answer(path)
            record = {"request": str(path), "response": str(response), **_stamp(response)}
            # No fsync: it guards against a killed process, not a lost disk cache, and every
            # request of a start-up scan passes here.
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(json.dumps(record) + "\n", encoding="utf-8")
            try:
                return answer(path)
            finally:
                marker.unlink(missing_ok=True)

        return run

    def recover(self, logger: logging.Logger) -> int:
        """Write the daily lines of answers a killed daemon wrote; returns how many."""
        count = 0
        for marker in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                record = json.loads(marker.read_text(encoding="utf-8"))
                response = Path(record["response"])
                before = {k: record.get(k) for k in ("revision", "sha256")}
                now = _stamp(response)
                found = recovered_answer(response) if now else None
                # Unchanged: the killed run wrote nothing; the start-up scan answers it anew.
                if found is not None and now != before:
                    self.write_entry(found)
                    count += 1
                    log_event(
                        logger,
                        logging.INFO,
                        "daily note entry recovered",
                        response=str(response),
                    )
            marker.unlink(missing_ok=True)
        return count
