"""`nexusd start|stop|status|logs` as real subprocesses against real daemons."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from daemon.helpers import (
    daemon,
    daemon_pid,
    daemon_without_memory,
    force_stop,
    nexusd,
    nexusd_env,
    request_text,
    served,
    start_daemon,
    wait_answered,
    wait_until,
    write_config,
)

__all__ = ["daemon", "daemon_without_memory", "served", "start_daemon"]  # fixtures

STATUS_FIELDS = {
    "running",
    "pid",
    "state",
    "started_at",
    "uptime_seconds",
    "answered",
    "skipped",
    "errors",
    "queued",
    "watched",
    "pending_watch",
    "last_error",
    "version",
    "log_file",
}


def test_start_reports_ready_and_a_second_start_reports_the_running_pid(daemon: Path) -> None:
    pid = daemon_pid(daemon)
    assert pid is not None

    again = nexusd(daemon, "start", check=False)
    foreground = nexusd(daemon, "start", "--foreground", check=False)

    assert again.returncode == 7  # README: 7 = already running
    assert f"nexusd is already running for this repository (pid {pid})" in again.stderr
    assert foreground.returncode == 7
    assert f"already running for this repository (pid {pid})" in foreground.stderr
    assert daemon_pid(daemon) == pid


def test_of_two_racing_starts_the_loser_exits_7(served: Path) -> None:
    starts = [
        subprocess.Popen(
            [sys.executable, "-P", "-m", "nexusd", "start"],
            cwd=served,
            env=nexusd_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        results = [(p.wait(timeout=90), *p.communicate()) for p in starts]
    finally:
        force_stop(served)

    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 7], results
    loser = next(err for code, _, err in results if code == 7)
    assert "already running for this repository" in loser


def test_status_logs_and_stop_work_with_a_broken_config_and_show_its_problems(
    daemon: Path,
) -> None:
    pid = daemon_pid(daemon)
    write_config(daemon, "nope: 1\nwatch:\n  debounce_ms: -1\n")

    running = nexusd(daemon, "status")
    as_json = json.loads(nexusd(daemon, "status", "--json").stdout)
    logs = nexusd(daemon, "logs", "-n", "5")
    stopped = nexusd(daemon, "stop")
    after = nexusd(daemon, "status", check=False)

    assert f"nexusd is running (pid {pid}" in running.stdout
    assert "config     invalid (the daemon keeps running" in running.stdout
    for text in (running.stdout, as_json["config_error"], logs.stderr, after.stdout):
        assert "2 problems in the configuration" in text
        assert "unknown key `nope`" in text
        assert "`watch.debounce_ms` must be a whole number" in text
    assert logs.stdout.strip()
    assert stopped.stdout.strip() == f"nexusd stopped (pid {pid})"
    assert after.returncode == 7
    assert "`nexusd start` fails until it is fixed" in after.stdout


def test_status_json_of_a_running_daemon(daemon: Path) -> None:
    request = daemon / ".scratchpad_logs" / "s_plan_request.md"
    request.write_text(request_text("Count me"), encoding="utf-8")
    wait_answered(request)

    proc = nexusd(daemon, "status", "--json")
    data = wait_until(
        lambda: (d := json.loads(nexusd(daemon, "status", "--json").stdout))["answered"] == 1 and d,
        what="answered=1 in status",
    )

    assert proc.returncode == 0
    assert set(data) >= STATUS_FIELDS
    assert (data["running"], data["state"], data["pid"]) == (True, "running", daemon_pid(daemon))
    assert isinstance(data["uptime_seconds"], int) and data["uptime_seconds"] >= 0
    assert data["watched"] == [str(daemon / ".scratchpad_logs")]
    assert data["pending_watch"] == [str(daemon / ".scratchpad")]
    assert (data["errors"], data["queued"], data["last_error"]) == (0, 0, None)


def test_status_text_and_exit_code_when_stopped(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    never = nexusd(served, "status", check=False)
    assert never.returncode == 7
    assert "not running (last state: never started)" in never.stdout

    start_daemon(served)
    running = nexusd(served, "status")
    assert running.stdout.startswith(f"nexusd is running (pid {daemon_pid(served)}, up ")
    assert f"watching   {served / '.scratchpad_logs'}" in running.stdout
    assert "  in_flight  -\n" in running.stdout  # nothing being answered, not Python's None
    assert "  skipped    0\n" in running.stdout  # a count of none needs no explaining

    nexusd(served, "stop")
    stopped = nexusd(served, "status", "--json", check=False)
    assert stopped.returncode == 7
    data = json.loads(stopped.stdout)
    assert (data["running"], data["state"], data["uptime_seconds"]) == (False, "stopped", None)
    assert data["stopped_at"]


def test_stop_without_a_daemon_is_not_an_error(served: Path) -> None:
    assert nexusd(served, "stop").stdout.strip() == "nexusd is not running"


def test_outside_a_repository_commands_say_so(tmp_path: Path) -> None:
    proc = nexusd(tmp_path, "status", check=False)
    assert proc.returncode == 5
    assert "not inside a git repository" in proc.stderr


def test_logs_pretty_raw_and_tail(daemon: Path) -> None:
    request = daemon / ".scratchpad_logs" / "l_plan_request.md"
    request.write_text(request_text("Log me"), encoding="utf-8")
    wait_answered(request)
    wait_until(lambda: "answered" in nexusd(daemon, "logs").stdout, what="the answered log line")

    raw = nexusd(daemon, "logs", "--json", "-n", "100").stdout.splitlines()
    two = nexusd(daemon, "logs", "-n", "2").stdout.splitlines()

    records = [json.loads(line) for line in raw]
    answered = [r for r in records if r["msg"] == "answered"]
    assert answered and answered[0]["path"] == str(request)
    assert {"daemon starting", "daemon ready"} <= {r["msg"] for r in records}
    assert len(two) == 2 and not two[0].startswith("{")


def test_logs_follow_prints_new_lines(daemon: Path) -> None:
    follower = subprocess.Popen(
        [sys.executable, "-m", "nexusd", "logs", "-f", "--json", "-n", "1"],
        cwd=daemon,
        env=nexusd_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    assert follower.stdout is not None
    stream = follower.stdout
    reader = threading.Thread(target=lambda: lines.extend(stream))
    reader.start()
    try:
        wait_until(lambda: lines, what="the tail, printed before following starts")
        request = daemon / ".scratchpad_logs" / "f_plan_request.md"
        request.write_text(request_text("Follow me"), encoding="utf-8")
        wait_answered(request)
        wait_until(lambda: any('"answered"' in line for line in lines), what="a followed line")
    finally:
        follower.terminate()
        follower.wait(timeout=30)
        reader.join()


def test_start_failure_is_reported_with_the_log_tail(served: Path) -> None:
    state = served / ".git" / "nexus" / "state"
    state.parent.mkdir(parents=True)
    state.write_text("a file where the state folder belongs", encoding="utf-8")

    proc = nexusd(served, "start", "--timeout", "60", check=False)

    assert proc.returncode == 7
    assert "the daemon exited during startup" in proc.stderr
    assert "FileExistsError" in proc.stderr  # from the daemon's own output, shown to the user
    assert daemon_pid(served) is None
