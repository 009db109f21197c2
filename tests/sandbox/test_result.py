"""Results: bounded head/tail capture, status, JSON round trip."""

from __future__ import annotations

import json

import pytest

from nexusd.sandbox.result import CheckResult, OutputCapture, captured


def test_small_output_is_kept_whole_in_the_head() -> None:
    cap = OutputCapture(100)
    for chunk in (b"hello ", b"world"):
        cap.feed(chunk)
    assert cap.parts() == ("hello world", "", False)


def test_large_output_keeps_head_and_tail_within_the_limit() -> None:
    cap = OutputCapture(100)
    data = b"".join(str(i).encode() + b"\n" for i in range(10_000))
    for i in range(0, len(data), 7):
        cap.feed(data[i : i + 7])
    head, tail, truncated = cap.parts()
    assert truncated and cap.total == len(data)
    assert head.encode() == data[:50]
    assert tail.encode() == data[-50:]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    cap = OutputCapture(100)
    cap.feed(b"\xff\xfeok")
    assert cap.parts()[0].endswith("ok")


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"exit_code": 0}, "passed"),
        ({"exit_code": 1}, "failed"),
        ({"exit_code": 137, "timed_out": True}, "timeout"),
        ({"exit_code": 137, "oom_killed": True}, "failed"),
        ({"exit_code": None, "error": "engine gone"}, "error"),
    ],
)
def test_status(kwargs: dict[str, object], status: str) -> None:
    assert CheckResult(name="c", backend="bwrap", duration_ms=1, **kwargs).status == status  # type: ignore[arg-type]


def test_round_trip_through_json_keeps_everything() -> None:
    out, err = OutputCapture(10), OutputCapture(10)
    out.feed(b"0123456789abcdefghij")
    err.feed(b"boom")
    result = CheckResult(
        name="c",
        backend="subprocess",
        exit_code=2,
        duration_ms=5,
        isolated=False,
        warnings=("NOT ISOLATED",),
        **captured(out, err),
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert data["status"] == "failed" and data["stdout_truncated"] is True
    assert CheckResult.from_dict(data) == result
    assert "bytes omitted" in result.stdout and result.stderr == "boom"
