"""The daemon's parts wired in-process: extension services and jobs, start/stop, no leaks."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from daemon.helpers import (
    answered_meta,
    request_text,
    response_for,
    wait_answered,
    wait_until,
    write_config,
)
from nexusd.atomic import new_file
from nexusd.config import load_config
from nexusd.daemon import logs
from nexusd.daemon.main import pipeline_answer
from nexusd.daemon.runtime import Daemon, DaemonContext, _remove_stale_temp_files
from nexusd.daemon.scheduler import Job
from nexusd.daemon.status import DaemonStats, read_status
from nexusd.paths import find_repo

T = TypeVar("T")


class Recorder:
    """An extension service with its own thread, like the memory search server."""

    name = "recorder"

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.events.append("start")
        self._thread = threading.Thread(target=self._stop.wait, name="recorder")
        self._thread.start()

    def stop(self) -> None:
        self.events.append("stop")
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


@pytest.fixture
def daemon_in_process(served: Path) -> Iterator[tuple[Daemon, list[str], threading.Event]]:
    layout = find_repo(served)
    config = load_config(layout.root)
    logger = logs.setup_logging(layout.log_file, "debug")
    ctx = DaemonContext(layout, config, logger, DaemonStats(pid=1), threading.Event())
    daemon = Daemon(ctx, pipeline_answer(layout, config))
    events: list[str] = []
    ticked = threading.Event()
    daemon.add_service(Recorder(events))
    daemon.add_job(Job("tick", 0.05, ticked.set))
    try:
        yield daemon, events, ticked
    finally:
        daemon.stop()
        logs.close_logging()


def test_extension_service_and_job_run_with_the_daemon(
    daemon_in_process: tuple[Daemon, list[str], threading.Event], served: Path
) -> None:
    daemon, events, ticked = daemon_in_process
    daemon.start()

    assert events == ["start"]
    assert daemon.ctx.stats.snapshot()["state"] == "running"
    assert ticked.wait(30)
    request = served / ".scratchpad_logs" / "inproc_plan_request.md"
    request.write_text(request_text("Answered in-process"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"

    daemon.stop()

    assert events == ["start", "stop"]
    status = read_status(find_repo(served).state_dir)
    assert status is not None
    assert (status["state"], status["answered"]) == ("stopped", 1)


def test_rescan_finds_a_request_the_watcher_could_not_see(
    daemon_in_process: tuple[Daemon, list[str], threading.Event], served: Path
) -> None:
    daemon, _, _ = daemon_in_process
    daemon.start()
    daemon.watcher.stop()  # simulate missed events (inotify queue overflow)
    request = served / ".scratchpad_logs" / "missed_plan_request.md"
    request.write_text(request_text("Missed by inotify"), encoding="utf-8")

    daemon.rescan()

    assert wait_answered(request)["revision"] == 1
    wait_until(lambda: daemon.ctx.stats.snapshot()["rescans"] == 1, what="the rescan count")


def test_a_stale_temporary_of_a_long_response_name_is_removed(tmp_path: Path) -> None:
    long_response = "2025-04-20T08_11_37_" + "x" * 218 + "_plan_response.md"  # 255 bytes
    fd, tmp = new_file(tmp_path, f".{long_response}.", ".tmp")  # as atomic_write_text names it
    os.close(fd)
    hour_ago = time.time() - 3600
    os.utime(tmp, (hour_ago, hour_ago))

    _remove_stale_temp_files(tmp_path)

    assert not tmp.exists()


def _rescan_until(daemon: Daemon, condition: Callable[[], T], what: str) -> T:
    """Run the periodic rescan (as its job would, only sooner) until `condition` holds."""

    def rescanned() -> T:
        daemon.rescan()
        return condition()

    return wait_until(rescanned, what=what)


def test_an_attempt_that_raised_is_retried_by_the_rescan_once_the_cause_is_gone(
    daemon_in_process: tuple[Daemon, list[str], threading.Event], served: Path
) -> None:
    daemon, _, _ = daemon_in_process
    claims = find_repo(served).nexus_dir / "claims"
    claims.parent.mkdir(parents=True, exist_ok=True)
    claims.write_text("a file where the claims folder goes\n", encoding="utf-8")
    daemon.start()
    request = served / ".scratchpad_logs" / "2025-04-20T08_11_37_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    stats = daemon.ctx.stats
    wait_until(lambda: stats.snapshot()["failures"] == 1, what="the failed attempt")

    claims.unlink()

    meta = _rescan_until(daemon, lambda: answered_meta(request), "the request answered")
    assert meta["revision"] == 1
    rescans = stats.snapshot()["rescans"]
    _rescan_until(daemon, lambda: stats.snapshot()["rescans"] >= rescans + 5, "more rescans")
    assert (stats.snapshot()["answered"], stats.snapshot()["failures"]) == (1, 1)


def test_a_response_that_could_not_be_written_is_written_once_the_folder_is_writable(
    daemon_in_process: tuple[Daemon, list[str], threading.Event], served: Path
) -> None:
    daemon, _, _ = daemon_in_process
    folder = served / ".scratchpad_logs"
    request = folder / "2025-04-20T08_11_37_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    # An immutable folder refuses new files even to root (where permissions do not).
    immutable = subprocess.run(["chattr", "+i", str(folder)], check=False, capture_output=True)
    if immutable.returncode != 0:
        pytest.skip("chattr +i is not available here (tmpfs, or no CAP_LINUX_IMMUTABLE)")
    try:
        daemon.start()
        stats = daemon.ctx.stats
        wait_until(lambda: stats.snapshot()["errors"] == 1, what="the failed write")
        assert not response_for(request).exists()
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)

    meta = _rescan_until(daemon, lambda: answered_meta(request), "the request answered")
    assert (meta["status"], meta["revision"]) == ("ok", 1)
    assert stats.snapshot()["answered"] == 1


@contextlib.contextmanager
def _runs_with_a_queue_of_one(
    served: Path,
) -> Iterator[tuple[DaemonStats, Callable[[list[Path], bool], None]]]:
    """One daemon's figures and `run(requests, settle)`: a run on them, as a configuration
    reload builds it, with a queue of one, stopped once `requests` are answered (and, with
    `settle`, once its queue is empty and the debouncer's last hand-ons are in)."""
    write_config(served, "watch:\n  queue_size: 1\n")
    layout = find_repo(served)
    config = load_config(layout.root)
    logger = logs.setup_logging(layout.log_file, "debug")
    stats = DaemonStats(pid=1)

    def run(requests: list[Path], settle: bool) -> None:
        ctx = DaemonContext(layout, config, logger, stats, threading.Event())
        daemon = Daemon(ctx, pipeline_answer(layout, config))
        daemon.start()
        try:
            for request in requests:
                wait_answered(request, timeout=60)
            if settle:
                wait_until(lambda: not len(daemon.queue), timeout=60, what="an empty queue")
                time.sleep(0.5)
        finally:
            daemon.stop()

    try:
        yield stats, run
    finally:
        logs.close_logging()


def test_dropped_counts_each_request_that_found_the_queue_full_once(served: Path) -> None:
    # A queue of one: the start-up scan turns all but one away, and each rescan after the
    # overflow turns the rest away again: `dropped` said 33 for 10 requests.
    folder = served / ".scratchpad_logs"
    before = 0
    with _runs_with_a_queue_of_one(served) as (stats, run):
        for number, count in enumerate((10, 4)):
            requests = [folder / f"run{number}-{i:02d}_plan_request.md" for i in range(count)]
            for i, request in enumerate(requests):
                request.write_text(request_text(f"Request {i} of run {number}"), encoding="utf-8")
            # The second run is a new Daemon on the same figures, as a configuration reload
            # builds it: the count goes on from where it was.
            run(requests, False)
            # Each request at most once (the one the worker took first never; a new run
            # scans the answered ones too); how many found the queue full depends on how
            # fast the worker takes them.
            found = len(list(folder.glob("*_plan_request.md")))
            dropped = stats.snapshot()["dropped"]
            assert 0 < dropped <= found - 1, (number, before, dropped)
            assert before <= dropped  # not restarted from 0
            before = dropped


def test_a_reload_does_not_count_the_requests_it_finds_again(served: Path) -> None:
    # Every run's start-up scan hands all requests on, answered ones too: with a queue of
    # one, each reload found most of them "dropped" anew (8 requests, 43 after 6 reloads).
    folder = served / ".scratchpad_logs"
    requests = [folder / f"r{i:02d}_plan_request.md" for i in range(8)]
    for i, request in enumerate(requests):
        request.write_text(request_text(f"Request {i}"), encoding="utf-8")
    with _runs_with_a_queue_of_one(served) as (stats, run):
        for _ in range(4):  # the first run, then three reloads with nothing new
            run(requests, True)
            assert stats.snapshot()["dropped"] <= len(requests)


def test_dropped_counts_a_path_once_and_lets_go_of_deleted_ones() -> None:
    stats = DaemonStats(pid=1)
    for name in ("a", "b", "a", "a"):
        stats.count_dropped(Path(name))
    assert stats.snapshot()["dropped"] == 2
    stats.forget_dropped(lambda path: path == Path("a"))  # `a` was deleted
    assert stats.snapshot()["dropped"] == 2  # a count never goes back
    stats.count_dropped(Path("b"))
    stats.count_dropped(Path("a"))  # a new file of that name: a new request
    assert stats.snapshot()["dropped"] == 3
