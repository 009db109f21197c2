"""The outcome of one check run, and the bounded head/tail capture of its output."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

NOT_ISOLATED_WARNING = (
    "NOT ISOLATED: this check ran as a plain subprocess on the host (no container, no "
    "namespaces): it could reach the network and read or write anything its user can."
)


class OutputCapture:
    """Keep the first and the last `limit // 2` bytes of a stream, count the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Account for one chunk read from the stream."""
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.half:
                # Trim in batches so a flood of tiny chunks stays linear.
                del self.tail[: len(self.tail) - self.half]

    def parts(self) -> tuple[str, str, bool]:
        """(head, tail, truncated) as text; tail is empty when nothing was dropped."""
        tail = bytes(self.tail[-self.half :])
        truncated = self.total > len(self.head) + len(tail)
        head_text = self.head.decode("utf-8", "replace")
        if not truncated:
            return head_text + tail.decode("utf-8", "replace"), "", False
        return head_text, tail.decode("utf-8", "replace"), True


@dataclass(frozen=True)
class CheckResult:
    """One check's run: how it ended, on which backend, and its bounded output."""

    name: str
    backend: str
    exit_code: int | None
    duration_ms: int
    timed_out: bool = False
    oom_killed: bool = False
    isolated: bool = True
    stdout_head: str = ""
    stdout_tail: str = ""
    stdout_truncated: bool = False
    stdout_bytes: int = 0
    stderr_head: str = ""
    stderr_tail: str = ""
    stderr_truncated: bool = False
    stderr_bytes: int = 0
    tree: str = ""
    reason: str = ""
    error: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def status(self) -> str:
        """`passed`, `failed`, `timeout` or `error` (the sandbox itself failed)."""
        if self.error:
            return "error"
        if self.timed_out:
            return "timeout"
        if self.exit_code == 0 and not self.oom_killed:
            return "passed"
        return "failed"

    @property
    def stdout(self) -> str:
        """Head and tail joined, with a marker where bytes were dropped."""
        return _joined(self.stdout_head, self.stdout_tail, self.stdout_truncated, self.stdout_bytes)

    @property
    def stderr(self) -> str:
        """Head and tail joined, with a marker where bytes were dropped."""
        return _joined(self.stderr_head, self.stderr_tail, self.stderr_truncated, self.stderr_bytes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping, including `status`."""
        data = asdict(self)
        data["warnings"] = list(self.warnings)
        data["status"] = self.status
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        """Rebuild a result from `to_dict()` output (unknown keys ignored)."""
        names = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in names}
        values["warnings"] = tuple(values.get("warnings", ()))
        return cls(**values)


def captured(stdout: OutputCapture, stderr: OutputCapture) -> dict[str, Any]:
    """The output fields of a CheckResult from two captures."""
    out_head, out_tail, out_trunc = stdout.parts()
    err_head, err_tail, err_trunc = stderr.parts()
    return {
        "stdout_head": out_head,
        "stdout_tail": out_tail,
        "stdout_truncated": out_trunc,
        "stdout_bytes": stdout.total,
        "stderr_head": err_head,
        "stderr_tail": err_tail,
        "stderr_truncated": err_trunc,
        "stderr_bytes": stderr.total,
    }


def _joined(head: str, tail: str, truncated: bool, total: int) -> str:
    if not truncated:
        return head + tail
    kept = len(head.encode()) + len(tail.encode())
    return f"{head}\n… [{total - kept} bytes omitted] …\n{tail}"
