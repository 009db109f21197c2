"""A running daemon (a real process started through the CLI) follows its configuration file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.helpers import (
    nexusd,
    published,
    request_text,
    response_for,
    wait_answered,
    wait_until,
    write_config,
)
from nexusd.config import Config, load_config
from nexusd.daemon.reload import ConfigWatch
from nexusd.paths import find_repo


def _log_messages(repo: Path) -> list[dict[str, Any]]:
    lines = nexusd(repo, "logs", "--json", "-n", "500").stdout.splitlines()
    return [json.loads(line) for line in lines]


def test_a_valid_change_is_applied_without_a_restart(daemon: Path) -> None:
    pid = published(daemon)["pid"]
    (daemon / "plans").mkdir()
    write_config(daemon, "watch:\n  paths: [plans]\n")
    wait_until(
        lambda: published(daemon).get("watched") == [str(daemon / "plans")],
        what="the daemon watching the newly configured folder",
    )

    request = daemon / "plans" / "2025-04-20T08_11_37_plan_request.md"
    request.write_text(request_text("Answer me from the new folder"), encoding="utf-8")

    assert wait_answered(request)["status"] == "ok"
    status = published(daemon)
    assert status["pid"] == pid and status["config_error"] is None
    assert status["config_reloaded_at"]
    assert "configuration reloaded" in {r["msg"] for r in _log_messages(daemon)}


def test_an_invalid_change_is_refused_with_every_problem_and_the_old_one_kept(
    daemon: Path,
) -> None:
    write_config(daemon, "watch:\n  paths: [plans]\n  debounce_ms: -1\nnope: 1\n")
    error = wait_until(
        lambda: published(daemon).get("config_error"), what="the daemon's config_error"
    )

    assert "2 problems in the configuration" in error
    assert "unknown key `nope`" in error and "`watch.debounce_ms`" in error
    refused = [r for r in _log_messages(daemon) if r["msg"].startswith("configuration invalid")]
    assert (
        refused and refused[0]["level"] == "error" and "unknown key `nope`" in refused[0]["error"]
    )
    # Still the configuration it started with: the old folder is answered.
    request = daemon / ".scratchpad_logs" / "2025-04-20T08_11_38_plan_request.md"
    request.write_text(request_text("Still answered here"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"

    write_config(daemon, "# fixed: back to the defaults\n")
    wait_until(lambda: published(daemon).get("config_error") is None, what="the error cleared")


def test_an_unreadable_config_file_is_reported_and_the_daemon_keeps_running(
    daemon: Path,
) -> None:
    # Reading /proc/self/mem at offset 0 fails with EIO for every user, root included (a
    # chmod would not stop root), so the configuration file really raises OSError.
    config = daemon / ".nexus" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    staged = config.with_name("staged.yaml")
    staged.symlink_to("/proc/self/mem")
    staged.replace(config)
    error = wait_until(
        lambda: published(daemon).get("config_error"), what="the daemon's config_error"
    )

    assert "config.yaml: cannot be read" in error
    status = nexusd(daemon, "status")
    assert status.stdout.startswith("nexusd is running")
    assert "cannot be read" in status.stdout
    request = daemon / ".scratchpad_logs" / "2025-04-20T08_11_39_plan_request.md"
    request.write_text(request_text("Still answered with an unreadable config"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"


SLOW_CHECK = """\
sandbox:
  backend: subprocess
checks:
  - name: slow
    run: python3 -c "import time; time.sleep(6)"
    timeout: 60
"""


def test_status_stays_running_while_a_reload_waits_for_the_request_in_flight(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    write_config(served, SLOW_CHECK)
    start_daemon(served)
    request = served / ".scratchpad_logs" / "2025-04-20T08_11_40_plan_request.md"
    request.write_text(request_text("Answered while the configuration changes"), "utf-8")
    wait_until(lambda: published(served).get("in_flight"), what="the request in flight")

    write_config(served, SLOW_CHECK + "watch:\n  debounce_ms: 60\n")
    wait_until(
        lambda: any(r["msg"].startswith("configuration changed") for r in _log_messages(served)),
        what="the reload to begin",
    )
    # The status file is written by its own thread, a moment after the log line: wait for
    # it (asserting at once failed about one run in three on a loaded machine).
    wait_until(lambda: published(served).get("reloading"), what="status to show the reload")
    # The reload waits for the check (seconds): meanwhile the daemon is still the running one.
    assert not response_for(request).exists()
    shown = json.loads(nexusd(served, "status", "--json").stdout)
    assert (shown["running"], shown["state"], shown["stopped_at"]) == (True, "running", None)
    assert shown["reloading"]
    assert "reloading since" in nexusd(served, "status").stdout
    states = set()

    def reloaded() -> object:
        states.add(published(served).get("state"))
        return published(served).get("config_reloaded_at")

    wait_until(reloaded, timeout=60, what="the reload to finish")
    assert states == {"running"}
    assert wait_answered(request)["status"] == "ok"


def test_a_change_made_before_the_watch_started_is_noticed(repo: Path) -> None:
    write_config(repo, "watch:\n  debounce_ms: 60\n")
    loaded = load_config(repo)  # what the daemon runs with…
    write_config(repo, "watch:\n  debounce_ms: 70\n")  # …changed before its watch begins
    watch = ConfigWatch(find_repo(repo))

    change = watch.poll()
    assert loaded.get("watch.debounce_ms") == 60
    assert isinstance(change, Config) and change.get("watch.debounce_ms") == 70
    assert watch.poll() is None  # seen once
