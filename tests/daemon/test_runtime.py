"""The daemon's parts wired in-process: extension services and jobs, start/stop, no leaks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.helpers import request_text, wait_answered, wait_until
from nexusd.config import load_config
from nexusd.daemon import logs
from nexusd.daemon.main import pipeline_answer
from nexusd.daemon.runtime import Daemon, DaemonContext
from nexusd.daemon.scheduler import Job
from nexusd.daemon.status import DaemonStats, read_status
from nexusd.paths import find_repo


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
