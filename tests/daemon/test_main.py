"""The daemon as a real process started through the CLI: save patterns, crashes, bursts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git

from daemon.helpers import (
    answered_meta,
    daemon_pid,
    nexusd,
    pid_gone,
    request_text,
    response_files,
    response_for,
    sha256_of,
    wait_answered,
    wait_until,
    write_config,
)

REQ = "2025-04-20T08_11_37_plan_request.md"


def _status(repo: Path) -> dict[str, object]:
    proc = nexusd(repo, "status", "--json", check=False)
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def _in_place(folder: Path, outside: Path, text: str) -> Path:
    target = folder / REQ
    with target.open("w", encoding="utf-8") as fh:
        fh.write(text)
    return target


def _slow_writer(folder: Path, outside: Path, text: str) -> Path:
    # One open handle, three chunks, pauses far longer than the debounce interval.
    target = folder / REQ
    third = len(text) // 3
    with target.open("w", encoding="utf-8") as fh:
        for chunk in (text[:third], text[third : 2 * third], text[2 * third :]):
            fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
            time.sleep(0.4)
    return target


def _temp_then_rename(folder: Path, outside: Path, text: str) -> Path:
    # vim / VS Code: write a temporary file beside the target, then rename over it.
    target = folder / REQ
    tmp = folder / f".{REQ}.swp"
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return target


def _move_in(folder: Path, outside: Path, text: str) -> Path:
    source = outside / REQ
    source.write_text(text, encoding="utf-8")
    return Path(shutil.move(source, folder / REQ))


def _copy(folder: Path, outside: Path, text: str) -> Path:
    source = outside / REQ
    source.write_text(text, encoding="utf-8")
    return Path(shutil.copy(source, folder / REQ))


SAVE_PATTERNS: dict[str, Callable[[Path, Path, str], Path]] = {
    "in-place": _in_place,
    "slow-writer": _slow_writer,
    "temp-then-rename": _temp_then_rename,
    "move-in": _move_in,
    "copy": _copy,
}


@pytest.mark.parametrize("pattern", list(SAVE_PATTERNS))
def test_each_save_pattern_is_answered_once(daemon: Path, tmp_path: Path, pattern: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    text = request_text(f"Answer a request saved by the {pattern} pattern " + "x" * 300)
    request = SAVE_PATTERNS[pattern](daemon / ".scratchpad_logs", outside, text)

    meta = wait_answered(request)

    assert meta["status"] == "ok"
    assert meta["revision"] == 1  # a partial file was never answered first
    assert response_files(daemon / ".scratchpad_logs") == [response_for(request)]
    assert not [p for p in (daemon / ".scratchpad_logs").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("folder_exists", [True, False], ids=["folder-exists", "folder-from-git"])
def test_request_arriving_by_git_checkout(
    repo: Path, start_daemon: Callable[..., Path], folder_exists: bool
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / ".scratchpad_logs").mkdir()
    request = repo / ".scratchpad_logs" / REQ
    request.write_text(request_text("Review the feature branch"), encoding="utf-8")
    git(repo, "add", ".scratchpad_logs")
    git(repo, "commit", "-q", "-m", "add a plan request")
    git(repo, "checkout", "-q", "main")
    assert not request.exists()
    if folder_exists:
        (repo / ".scratchpad_logs").mkdir()
    start_daemon(repo)

    git(repo, "checkout", "-q", "feature")

    assert wait_answered(request)["status"] == "ok"


def test_edited_request_is_answered_again_as_revision_2(daemon: Path) -> None:
    request = daemon / ".scratchpad_logs" / REQ
    request.write_text(request_text("First goal"), encoding="utf-8")
    first = wait_answered(request)
    request.write_text(request_text("Second, edited goal"), encoding="utf-8")

    second = wait_answered(request)

    assert (first["revision"], second["revision"]) == (1, 2)
    assert second["request_sha256"] != first["request_sha256"]
    assert response_files(daemon / ".scratchpad_logs") == [response_for(request)]


def test_deleted_response_is_answered_again_while_the_daemon_runs(daemon: Path) -> None:
    request = daemon / ".scratchpad_logs" / REQ
    request.write_text(request_text("Answer me twice"), encoding="utf-8")
    first = wait_answered(request)
    response_for(request).unlink()

    again = wait_answered(request)

    assert (first["revision"], again["revision"]) == (1, 1)
    wait_until(lambda: _status(daemon)["answered"] == 2, what="two answers in status")


def test_requests_written_while_down_are_answered_at_start(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    folder = served / ".scratchpad_logs"
    requests = [folder / f"2025-04-20T08_11_{i:02d}_plan_request.md" for i in range(5)]
    for i, request in enumerate(requests):
        request.write_text(request_text(f"Written while down {i}"), encoding="utf-8")

    start_daemon(served)

    for request in requests:
        assert wait_answered(request)["revision"] == 1


def test_folder_created_after_start_is_watched(
    repo: Path, start_daemon: Callable[..., Path]
) -> None:
    start_daemon(repo)
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    request = folder / REQ
    request.write_text(request_text("Created after the daemon"), encoding="utf-8")

    assert wait_answered(request)["status"] == "ok"
    # status.json is rewritten at most every 0.2 s: the answer can be faster than that.
    wait_until(
        lambda: str(folder) in _status(repo)["watched"],  # type: ignore[operator]
        what="the new folder in `nexusd status`",
    )


def test_nested_folder_created_later_is_found_by_the_rescan(
    repo: Path, start_daemon: Callable[..., Path]
) -> None:
    write_config(repo, "watch:\n  paths: [docs/plans]\n  rescan_seconds: 1\n")
    start_daemon(repo)
    folder = repo / "docs" / "plans"
    folder.mkdir(parents=True)
    request = folder / REQ
    request.write_text(request_text("Found by the periodic rescan"), encoding="utf-8")

    assert wait_answered(request)["status"] == "ok"


@pytest.mark.slow
def test_kill_9_mid_processing_then_start_answers_each_request_exactly_once(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    folder = served / ".scratchpad_logs"
    start_daemon(served)
    pid = daemon_pid(served)
    assert pid is not None
    requests = []
    for i in range(150):
        request = folder / f"2025-04-20T09_{i // 60:02d}_{i % 60:02d}_plan_request.md"
        tmp = folder / f".{request.name}.tmp"
        tmp.write_text(request_text(f"Crash test request {i}"), encoding="utf-8")
        tmp.replace(request)
        requests.append(request)
    wait_until(lambda: response_files(folder), what="the first response")

    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: pid_gone(pid), what="the killed daemon to exit")
    answered_before = len(response_files(folder))
    assert answered_before < len(requests), "the daemon finished before it was killed"
    assert _status(served)["state"] == "crashed"
    start_daemon(served)

    for request in requests:
        assert wait_answered(request, timeout=60)["revision"] == 1
    assert len(response_files(folder)) == len(requests)


@pytest.mark.slow
def test_burst_of_500_requests_each_answered_exactly_once(daemon: Path) -> None:
    folder = daemon / ".scratchpad_logs"
    requests = []
    for i in range(500):
        request = folder / f"burst-{i:04d}_plan_request.md"
        request.write_text(request_text(f"Burst request number {i}"), encoding="utf-8")
        requests.append(request)

    wait_until(lambda: len(response_files(folder)) == 500, timeout=240, what="500 responses")
    metas = [wait_answered(request) for request in requests]

    assert {m["revision"] for m in metas} == {1}
    assert {m["request_sha256"] for m in metas} == {sha256_of(r) for r in requests}
    status = wait_until(lambda: (s := _status(daemon))["answered"] == 500 and s, what="counts")
    assert status["errors"] == 0
    assert status["failures"] == 0


@pytest.mark.slow
def test_queue_overflow_is_recovered_by_a_rescan(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    write_config(served, "watch:\n  queue_size: 3\n")
    start_daemon(served)
    folder = served / ".scratchpad_logs"
    requests = [folder / f"overflow-{i:03d}_plan_request.md" for i in range(40)]
    for i, request in enumerate(requests):
        request.write_text(request_text(f"Overflow {i}"), encoding="utf-8")

    for request in requests:
        assert wait_answered(request, timeout=60)["revision"] == 1
    assert _status(served)["dropped"] > 0  # type: ignore[operator]


BAD_INPUTS: dict[str, bytes] = {
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "not-utf8": "goal: caf\u00e9 au lait\n".encode("latin-1"),
    "malformed-front-matter": b"---\ngoal: [unclosed\ncycle: 1\n---\nbody\n",
    "over-size-cap": b"# goal\n" + b"a" * 5000,
}


def test_bad_inputs_get_error_responses_and_the_daemon_keeps_running(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    write_config(served, "watch:\n  max_request_bytes: 2048\n")
    start_daemon(served)
    folder = served / ".scratchpad_logs"
    bad = []
    for name, data in BAD_INPUTS.items():
        request = folder / f"bad-{name}_plan_request.md"
        request.write_bytes(data)
        bad.append(request)

    for request in bad:
        assert wait_answered(request)["status"] == "error", request.name
    good = folder / "good_plan_request.md"
    good.write_text(request_text("A good request after the bad ones"), encoding="utf-8")
    assert wait_answered(good)["status"] == "ok"
    status = wait_until(lambda: (s := _status(served))["errors"] == len(bad) and s, what="errors")
    assert status["running"] is True
    assert status["last_error"] is not None


def test_unwritable_response_path_is_a_visible_error(daemon: Path) -> None:
    folder = daemon / ".scratchpad_logs"
    # A request name of NAME_MAX (255) bytes: its response's name is one byte longer, so
    # nothing can be written there, even as root (where permissions do not bind).
    request = folder / ("n" * (255 - len("_plan_request.md")) + "_plan_request.md")
    request.write_text(request_text("Nowhere to answer"), encoding="utf-8")

    status = wait_until(
        lambda: (s := _status(daemon))["last_error"] and s, what="last_error in status"
    )

    assert status["last_error"]["path"] == str(request)  # type: ignore[index]
    assert status["running"] is True
    other = folder / "other_plan_request.md"
    other.write_text(request_text("Still answering others"), encoding="utf-8")
    assert wait_answered(other)["status"] == "ok"


def test_stop_is_graceful_and_pending_work_resumes_at_next_start(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    folder = served / ".scratchpad_logs"
    start_daemon(served)
    pid = daemon_pid(served)
    assert pid is not None
    requests = [folder / f"graceful-{i:03d}_plan_request.md" for i in range(40)]
    for i, request in enumerate(requests):
        request.write_text(request_text(f"Graceful {i}"), encoding="utf-8")
    wait_until(lambda: response_files(folder), what="the first response")

    out = nexusd(served, "stop").stdout

    assert f"stopped (pid {pid})" in out
    assert pid_gone(pid)
    assert not (served / ".git" / "nexus" / "nexusd.pid").exists()
    status = _status(served)
    assert (status["state"], status["in_flight"], status["running"]) == ("stopped", None, False)
    # Every response on disk is complete and answers its request (none cut short).
    done = response_files(folder)
    assert all(answered_meta(r.with_name(r.name.replace("response", "request"))) for r in done)
    start_daemon(served)
    for request in requests:
        assert wait_answered(request)["revision"] == 1


def test_stale_temporary_responses_of_a_killed_daemon_are_removed_at_start(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    folder = served / ".scratchpad_logs"
    stale = folder / f".{REQ.replace('request', 'response')}.k9x2ab.tmp"
    stale.write_text("half a response", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fresh = folder / ".someone-elses.tmp"
    fresh.write_text("not ours", encoding="utf-8")

    start_daemon(served)

    assert not stale.exists()
    assert fresh.exists()


def test_the_daemon_counts_the_time_box_from_when_it_picked_the_request_up(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    # With a 1 ms budget, nothing is left once the daemon has the request in hand: the
    # provider (a real server that would answer) is not asked, and the response says why.
    from tests.models.loopback import Loopback, Reply, chat_payload

    with Loopback([Reply(body=chat_payload("lorem ipsum"))]) as server:
        write_config(
            served,
            "planner: {provider: server, timeout_ms: 1}\n"
            f"providers:\n  server: {{type: openai, base_url: '{server.url}/v1', model: m}}\n",
        )
        start_daemon(served)
        request = served / ".scratchpad_logs" / REQ
        request.write_text(request_text("Make the login test pass"), encoding="utf-8")
        meta = wait_answered(request)
        asked = list(server.requests)
    assert asked == []
    assert meta["planner"] == "offline"
    (note,) = [w for w in meta["warnings"] if "planner.timeout_ms" in w]
    assert "since the daemon picked up the request" in note
