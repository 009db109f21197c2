"""Periodic jobs on a real APScheduler BackgroundScheduler."""

from __future__ import annotations

import logging
import threading

from daemon.helpers import wait_until
from nexusd.daemon.scheduler import Job, Scheduler


def test_jobs_run_repeatedly_and_a_failing_job_keeps_running() -> None:
    runs = {"ok": 0, "boom": 0}
    lock = threading.Lock()

    def ok() -> None:
        with lock:
            runs["ok"] += 1

    def boom() -> None:
        with lock:
            runs["boom"] += 1
        raise RuntimeError("a job failed")

    scheduler = Scheduler([Job("ok", 0.05, ok)], logging.getLogger("test"))
    scheduler.add(Job("boom", 0.05, boom))
    scheduler.add(Job("disabled", 0, ok))
    scheduler.start()
    try:
        wait_until(lambda: runs["ok"] >= 3 and runs["boom"] >= 3, what="three runs of each job")
    finally:
        scheduler.stop()
    after_stop = dict(runs)
    assert after_stop["boom"] >= 3  # raising did not unschedule it


def test_job_added_after_start_runs() -> None:
    ran = threading.Event()
    scheduler = Scheduler([], logging.getLogger("test"))
    scheduler.start()
    try:
        scheduler.add(Job("late", 0.05, ran.set))
        assert ran.wait(30)
    finally:
        scheduler.stop()
