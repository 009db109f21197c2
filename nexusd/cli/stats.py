"""`nexusd stats`: model usage, fallbacks and phase timings from the telemetry log."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@repo_option
def stats(as_json: bool, repo: Path | None) -> None:
    """Summarize <git-dir>/nexus/logs/telemetry.jsonl: per planner and per phase.

    Each answered request adds one event: the planner that answered, its model
    calls, retries, fallbacks and tokens, and how long each phase took.

    \b
    Examples:
      nexusd stats
      nexusd stats --json | jq '.planners'
    """
    from nexusd.models.telemetry import read_events, summarize, telemetry_file

    layout, _ = open_repo(repo)
    events, bad = read_events(layout)
    summary = summarize(events) | {"unreadable_lines": bad, "file": str(telemetry_file(layout))}
    if as_json:
        echo_json(summary)
        return
    totals = summary["totals"]
    click.echo(
        f"{totals['events']} events, {totals['calls']} model calls, "
        f"{totals['fallbacks']} fallbacks, tokens in/out "
        f"{totals['tokens_in']}/{totals['tokens_out']}"
    )
    for name, row in summary["planners"].items():
        lat = row["latency_ms"]
        click.echo(
            f"  {name}: {row['requests']} requests, {row['calls']} calls, "
            f"{row['retries']} retries, {row['fallbacks']} fallbacks, "
            f"latency ms median {lat['median']:.0f} p95 {lat['p95']:.0f} max {lat['max']:.0f}"
        )
    for name, row in summary["phases"].items():
        click.echo(
            f"  phase {name}: {row['count']}× median {row['median']:.0f} ms, "
            f"p95 {row['p95']:.0f} ms"
        )
    if bad:
        click.echo(f"  {bad} unreadable line(s) skipped in {summary['file']}")
    if not events:
        click.echo(f"no telemetry yet in {summary['file']}")
