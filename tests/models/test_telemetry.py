"""Telemetry lines and their summary."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from nexusd.models.telemetry import Usage, read_events, record, summarize, telemetry_file
from nexusd.paths import find_repo


def test_events_append_as_json_lines(repo: Path) -> None:
    layout = find_repo(repo)
    record(layout, {"event": "plan", "usage": Usage("api", "m", 10, 5, 1, 2, 30.0).as_dict()})
    record(layout, {"event": "phase", "phases": {"librarian": 12.5}})
    path = telemetry_file(layout)
    assert path == layout.git_common_dir / "nexus" / "logs" / "telemetry.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["usage"]["tokens_in"] == 10 and "ts" in first


def test_concurrent_writers_never_interleave(repo: Path) -> None:
    layout = find_repo(repo)

    def write(n: int) -> None:
        for i in range(50):
            record(layout, {"event": "x", "writer": n, "i": i, "pad": "y" * 500})

    threads = [threading.Thread(target=write, args=(n,), name=f"writer-{n}") for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events, bad = read_events(layout)
    assert bad == 0 and len(events) == 200


def test_summary(repo: Path) -> None:
    layout = find_repo(repo)
    for ms, ok, fallback in ((100, True, False), (300, True, False), (900, False, True)):
        usage = Usage(
            "api", "m", tokens_in=100, tokens_out=20, retries=1, calls=2, duration_ms=ms
        ).as_dict()
        record(
            layout,
            {
                "event": "plan",
                "planner": "api:m",
                "ok": ok,
                "fallback": fallback,
                "usage": usage,
                "phases": {"architect": ms},
            },
        )
    telemetry_file(layout).open("a").write("not json\n")
    events, bad = read_events(layout)
    summary = summarize(events)
    assert bad == 1
    assert summary["totals"] == {
        "events": 3,
        "calls": 6,
        "fallbacks": 1,
        "tokens_in": 300,
        "tokens_out": 60,
    }
    row = summary["planners"]["api:m"]
    assert (row["requests"], row["failed"], row["fallbacks"], row["retries"]) == (3, 1, 1, 3)
    assert row["latency_ms"] == {"median": 300.0, "p95": 900.0, "max": 900.0}
    assert summary["phases"]["architect"]["count"] == 3


def test_no_file_means_no_events(repo: Path) -> None:
    events, bad = read_events(find_repo(repo))
    assert (events, bad) == ([], 0)
    assert summarize(events)["totals"]["events"] == 0


def test_events_that_cannot_be_summed_are_counted_unreadable(repo: Path) -> None:
    layout = find_repo(repo)
    record(layout, {"planner": "offline", "phases": {"plan": 3.0}})
    path = telemetry_file(layout)
    with path.open("a", encoding="utf-8") as out:  # hand-edited or torn lines
        out.write('{"phases": [1]}\n{"usage": {"calls": Infinity}}\n')
        out.write('{"usage": {"tokens_in": ' + "9" * 30 + "}}\n[1]\nnot json\n")
    events, bad = read_events(layout)
    assert len(events) == 1 and bad == 5
    summary = summarize(events)  # raised AttributeError / OverflowError on those
    assert summary["totals"]["events"] == 1
    json.dumps(summary, allow_nan=False)
