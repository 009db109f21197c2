"""Reading and parsing a request file, and timing the phases of its answer.

The read never follows a link and never blocks on a FIFO; it keeps at most the cap
plus one byte, yet hashes the whole file so the record of what was answered is exact.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import PlanRequest
from nexusd.protocol.parse import parse_request
from nexusd.protocol.reading import open_regular

_CHUNK = 1 << 20


@dataclass(frozen=True)
class RawRequest:
    """The bytes read from a request file (at most cap + 1) and the sha256 of all of it."""

    data: bytes
    sha256: str
    size: int


class PhaseClock:
    """Per-phase wall-clock timings in milliseconds."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = self._mark = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.timings[phase] = round((now - self._mark) * 1000.0, 3)
        self._mark = now

    def add(self, phase: str, ms: float) -> None:
        self.timings[phase] = round(ms, 3)

    def total(self) -> float:
        return round((time.perf_counter() - self._start) * 1000.0, 3)


def read_request(path: Path, max_bytes: int) -> RawRequest:
    """Read at most `max_bytes + 1` bytes; the hash still covers the whole file (raises OSError)."""
    # Never through a link (its target may be outside the repository) and never a FIFO
    # (it would block): a file swapped after nexusd checked it is refused here.
    with open_regular(path) as fh:
        data = fh.read(max_bytes + 1)
        digest = hashlib.sha256(data)
        size = len(data)
        if size > max_bytes:
            # Over the cap: hash the rest without keeping it, so the record stays exact.
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    return RawRequest(data=data, sha256=digest.hexdigest(), size=size)


def parse_phase(raw: RawRequest, rel: str, max_bytes: int) -> PlanRequest:
    """Parse the request (raises ProtocolError, also for files over the size cap)."""
    if raw.size > max_bytes:
        raise ProtocolError(
            f"the request is {raw.size} bytes, over the {max_bytes}-byte limit",
            hint="keep requests short: list large material as artifacts instead of pasting it,"
            " or raise `watch.max_request_bytes` in .nexus/config.yaml",
        )
    return parse_request(raw.data, rel, max_bytes=max_bytes)
