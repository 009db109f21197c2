"""Every error the daemon logs for a request is a response on disk: a client never waits
for a file that will not come. A provider that is not defined stops `nexusd start`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from daemon.helpers import (
    answered_meta,
    daemon_pid,
    nexusd,
    request_text,
    response_for,
    served,
    start_daemon,
    wait_answered,
    wait_until,
    write_config,
)

__all__ = ["served", "start_daemon"]  # fixtures


def test_start_refuses_a_provider_that_is_not_defined(served: Path) -> None:
    write_config(served, "planner:\n  provider: nope\n")
    proc = nexusd(served, "start", check=False)
    assert proc.returncode == 3, proc.stderr  # README: 3 = configuration error
    config = served / ".nexus" / "config.yaml"
    assert f"{config}: `planner.provider` names provider `nope`" in proc.stderr
    assert daemon_pid(served) is None


def test_a_request_the_configuration_stops_gets_an_error_response(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    # A catalog that is missing is only found when a request is answered.
    write_config(served, "planner:\n  catalog: practices.yaml\n")
    start_daemon(served)
    request = served / ".scratchpad_logs" / "2026-01-02T03_04_05_plan_request.md"
    request.write_text(request_text("Make the login test pass"), encoding="utf-8")
    meta = wait_answered(request, timeout=60)
    assert meta["status"] == "error" and meta["error"]["kind"] == "setup"
    assert "planner.catalog" in meta["error"]["message"]

    def logged() -> str | None:
        out = nexusd(served, "logs").stdout
        return out if "with an error" in out else None

    logs = wait_until(logged, what="the error in the log")
    assert f"response={response_for(request)}" in logs
    assert "no response written" not in logs
    # Fixed: the daemon reloads the configuration and answers the request anew.
    (served / "practices.yaml").write_text(
        "entries:\n  - id: a\n    title: A\n    keywords: [login]\n    practice: Do A.\n",
        encoding="utf-8",
    )
    write_config(served, "planner:\n  catalog: practices.yaml\n  max_actions: 7\n")

    def answered_ok() -> dict[str, object] | None:
        meta = answered_meta(request)
        return meta if meta.get("status") == "ok" else None

    fixed = wait_until(answered_ok, timeout=60, what="the request answered again")
    assert fixed["revision"] == 2


def test_front_matter_values_yaml_cannot_build_get_an_error_response(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    # PyYAML let ValueError, KeyError… out for these: the daemon logged "request failed",
    # wrote nothing and retried for ever, and the client waited for a response in vain.
    start_daemon(served)
    folder = served / ".scratchpad_logs"
    values = {
        "date": "2025-02-30",  # day out of range
        "cycle": "9" * 5000,  # more digits than Python converts
        "tagged": "!!bool maybe",
    }
    requests = []
    for n, (key, value) in enumerate(values.items()):
        request = folder / f"2026-01-02T03_04_0{n}_plan_request.md"
        request.write_text(f"---\ngoal: Fix login\n{key}: {value}\n---\n", encoding="utf-8")
        requests.append(request)

    for request in requests:
        meta = wait_answered(request)
        assert meta["status"] == "error" and meta["error"]["line"] == 3
        assert "cannot read the value" in meta["error"]["message"]
        assert "fix the YAML on line 3" in meta["error"]["fix"]
    nexusd(served, "stop")
    assert "request failed" not in nexusd(served, "logs", "-n", "500").stdout
