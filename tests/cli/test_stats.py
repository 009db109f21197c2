"""`nexusd stats` over a real telemetry log."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.models.telemetry import Usage, record
from nexusd.paths import find_repo


def invoke(*args: str):
    return CliRunner().invoke(cli, ["stats", *args], catch_exceptions=False)


def test_empty_log(repo: Path) -> None:
    result = invoke("-C", str(repo))
    assert result.exit_code == 0
    assert "0 events" in result.stdout and "no telemetry yet" in result.stdout


def test_summary_text_and_json(repo: Path) -> None:
    layout = find_repo(repo)
    record(
        layout,
        {
            "event": "plan",
            "planner": "laptop:qwen",
            "ok": True,
            "fallback": False,
            "usage": Usage("laptop", "qwen", 800, 150, 0, 1, 2400.0).as_dict(),
            "phases": {"librarian": 40.0, "architect": 2400.0},
        },
    )
    record(
        layout,
        {
            "event": "plan",
            "planner": "laptop:qwen",
            "ok": False,
            "fallback": True,
            "usage": Usage("laptop", "qwen", 0, 0, 2, 3, 9000.0).as_dict(),
        },
    )
    text = invoke("-C", str(repo)).stdout
    assert "2 events, 4 model calls, 1 fallbacks, tokens in/out 800/150" in text
    assert "laptop:qwen: 2 requests, 4 calls, 2 retries, 1 fallbacks" in text
    assert "phase architect: 1× median 2400 ms" in text
    data = json.loads(invoke("-C", str(repo), "--json").stdout)
    assert data["planners"]["laptop:qwen"]["latency_ms"]["max"] == 9000.0
    assert data["file"].endswith("nexus/logs/telemetry.jsonl")
    assert data["unreadable_lines"] == 0


def test_lines_that_cannot_be_summed_are_skipped_and_counted(repo: Path) -> None:
    # A hand-edited or torn log: `phases` as a list ended in an AttributeError, an
    # infinite count in an OverflowError, and NaN was printed as `NaN` (not JSON).
    layout = find_repo(repo)
    record(layout, {"event": "plan", "phases": {"librarian": 12.0}})
    log = repo / ".git" / "nexus" / "logs" / "telemetry.jsonl"
    with log.open("a", encoding="utf-8") as out:
        out.write('{"phases": [1]}\n{"usage": {"calls": Infinity}}\n')
        out.write('{"phases": {"x": NaN}}\n{"usage": {"calls": ' + "9" * 400 + "}}\n")
    text = invoke("-C", str(repo))
    assert text.exit_code == 0, text.output
    assert "1 events" in text.stdout and "4 unreadable line(s) skipped" in text.stdout
    shown = invoke("-C", str(repo), "--json")

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    data = json.loads(shown.stdout, parse_constant=refuse)
    assert data["unreadable_lines"] == 4 and data["totals"]["events"] == 1
