"""`nexusd start|stop|status|logs`: run and inspect this repository's daemon."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from nexusd.cli._common import (
    config_problem,
    echo_json,
    open_repo,
    repo_option,
    warn_config_problem,
)
from nexusd.errors import DaemonError
from nexusd.paths import find_repo


@click.command()
@repo_option
@click.option("--foreground", is_flag=True, help="Run in this process (for systemd, launchd).")
@click.option("--timeout", default=30.0, show_default=True, help="Seconds to wait for readiness.")
@click.option("--detached-child", is_flag=True, hidden=True)
def start(repo: Path | None, foreground: bool, timeout: float, detached_child: bool) -> None:
    """Start the daemon that answers plan requests in this repository.

    Without --foreground it detaches and returns once the daemon is ready
    (watching, startup scan done). One daemon per repository: if one already
    runs (or another `start` won the race), its pid is named and the exit code
    is 7, as with --foreground; so does a daemon that fails to start or is not
    ready within --timeout (the log's last lines are shown). State, pid file,
    lock and logs are this working tree's own, under its git directory:
    `.git/nexus/` in the main checkout, `.git/worktrees/<name>/nexus/` in a
    linked worktree.
    """
    layout, config = open_repo(repo)
    if foreground:
        from nexusd.daemon.main import run_daemon

        raise SystemExit(run_daemon(layout, config, log_to_stderr=not detached_child))
    from nexusd.daemon.control import start_detached

    pid, started = start_detached(layout, timeout=timeout)
    if not started:
        raise DaemonError(
            f"nexusd is already running for this repository (pid {pid})",
            hint="use `nexusd status`, or `nexusd stop` first",
        )
    click.echo(f"nexusd started (pid {pid}), watching {layout.root}")


@click.command()
@repo_option
@click.option("--timeout", default=60.0, show_default=True, help="Seconds to wait for the exit.")
def stop(repo: Path | None, timeout: float) -> None:
    """Stop the daemon gracefully: it finishes the request in flight, then exits.

    Exit code 0 also when no daemon was running; 7 when it did not exit in time.
    Works with an invalid configuration (and says what is wrong with it).
    """
    layout = find_repo(repo)
    warn_config_problem(config_problem(layout))
    from nexusd.daemon.control import stop_daemon

    pid = stop_daemon(layout, timeout=timeout)
    click.echo("nexusd is not running" if pid is None else f"nexusd stopped (pid {pid})")


@click.command()
@repo_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def status(repo: Path | None, as_json: bool) -> None:
    """Show whether the daemon runs and what it did (answered, errors, queue, last error).

    A stopped daemon's last published figures are shown too (state `crashed`
    when it was killed). Exit code 0 when running, 7 when not running (like
    `systemctl status`, so scripts can test it).

    \b
    answered  requests answered with status ok
    errors    requests answered with status error (bad input, or no response possible)
    skipped   requests whose current content was already answered
    failures  requests whose handling raised (see last error and `nexusd logs`)
    queued    requests waiting for the worker
    dropped   requests that found the queue full, each counted once (a rescan finds them)
    code index  files and units indexed, or the first build's progress
    sandbox   the backend the last checks ran on; FALLBACK when `auto` could not use docker
    config    an invalid configuration's problems (status works with one)
    """
    layout = find_repo(repo)
    from nexusd.daemon.control import describe

    data = describe(layout)
    error = config_problem(layout)
    if error is not None:
        data["config_error"] = str(error)
    if as_json:
        echo_json(data)
    else:
        click.echo(_status_text(data))
    if not data["running"]:
        raise SystemExit(DaemonError.exit_code)


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int):
        return "?"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


# What a count that is not plain from its name means (`status --json` keeps the numbers).
_MEANING = {
    "skipped": "  (already answered as they are, or someone else's response is in the way)",
    "failures": "  (requests whose answering failed; see `nexusd logs`)",
    "dropped": "  (requests that found the queue full, watch.queue_size, each counted once;"
    " a rescan finds them)",
}


def _status_text(data: dict[str, Any]) -> str:
    if data["running"]:
        head = f"nexusd is running (pid {data.get('pid')}, up {_duration(data['uptime_seconds'])})"
    else:
        head = f"nexusd is not running (last state: {data.get('state')})"
    rows = [head]
    for key in ("answered", "errors", "skipped", "failures", "queued", "dropped", "in_flight"):
        if key in data:
            value = data[key] if data[key] is not None else "-"
            rows.append(f"  {key:<10} {value}{_MEANING.get(key, '') if value else ''}")
    for folder in data.get("watched") or []:
        rows.append(f"  watching   {folder}")
    for folder in data.get("pending_watch") or []:
        rows.append(f"  waiting for {folder} (not created yet)")
    error = data.get("last_error")
    if isinstance(error, dict):
        rows.append(
            f"  last error {error.get('at')} {error.get('path') or ''}: {error.get('message')}"
        )
    code = data.get("code")
    if isinstance(code, dict):
        rows.append(f"  code index {_code_text(code)}")
    api = data.get("api")
    if isinstance(api, dict) and data["running"]:
        shown = api.get("error") or f"{api.get('url')} (context API and /mcp)"
        rows.append(f"  api        {shown}")
    if isinstance(data.get("sandbox"), dict):
        from nexusd.sandbox.record import status_line

        rows.append(f"  sandbox    {status_line(data['sandbox'])}")
    if data.get("log_file"):
        rows.append(f"  log        {data['log_file']}")
    if data.get("reloading") and data["running"]:
        since = data["reloading"]
        rows.append(f"  config     reloading since {since} (after the request in flight)")
    if data.get("config_reloaded_at"):
        rows.append(f"  config     reloaded {data['config_reloaded_at']}")
    config_error = data.get("config_error")
    if config_error:
        effect = (
            "the daemon keeps running with the configuration it last loaded"
            if data["running"]
            else "`nexusd start` fails until it is fixed"
        )
        rows.append(f"  config     invalid ({effect}):")
        rows.extend(f"    {line}" for line in str(config_error).splitlines())
    return "\n".join(rows)


def _code_text(code: dict[str, Any]) -> str:
    """`1603 files, 41942 units, complete`, `building 500/1603`, or why it failed."""
    if code.get("state") == "failed":
        return f"failed: {code.get('last_error')}"
    progress = code.get("progress")
    if not code.get("complete"):
        if progress:
            return f"building {progress[0]}/{progress[1]}"
        if code.get("state") in ("opening", "building"):
            return f"{code['state']} (listing files)"
    text = f"{code.get('files')} files, {code.get('units')} units, "
    text += "complete" if code.get("complete") else "incomplete"
    last = code.get("last_update")
    if isinstance(last, dict) and code.get("last_update_at"):
        text += f" (updated {code['last_update_at']}: {last.get('parsed')} parsed)"
    return text


@click.command()
@repo_option
@click.option("-n", "--lines", default=50, show_default=True, help="How many recent lines.")
@click.option("-f", "--follow", is_flag=True, help="Keep printing new lines (Ctrl-C stops).")
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON lines.")
def logs(repo: Path | None, lines: int, follow: bool, as_json: bool) -> None:
    """Print this working tree's daemon log (JSON lines under `<git-dir>/nexus/logs/`)."""
    layout = find_repo(repo)
    warn_config_problem(config_problem(layout))
    from nexusd.daemon.logs import follow_lines, log_size, render_line, tail_lines

    start = log_size(layout.log_file)
    for line in tail_lines(layout.log_file, lines):
        click.echo(render_line(line, as_json=as_json))
    if follow:
        try:
            for line in follow_lines(layout.log_file, start=start):
                click.echo(render_line(line, as_json=as_json))
        except KeyboardInterrupt:
            pass
    elif not layout.log_file.exists():
        click.echo(json.dumps({"msg": "no log yet"}) if as_json else "no log yet", err=True)
