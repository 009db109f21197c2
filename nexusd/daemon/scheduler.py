"""Periodic jobs (APScheduler's BackgroundScheduler), each a named callable and an interval.

Add a job by appending a `Job` to the daemon's job list (see `nexusd.daemon.runtime`).
A job that raises is logged and runs again at its next interval; runs never overlap.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nexusd.daemon.logs import log_event


@dataclass(frozen=True)
class Job:
    """`func()` every `interval` seconds (interval ≤ 0 disables the job)."""

    name: str
    interval: float
    func: Callable[[], Any]


class Scheduler:
    """Owns one BackgroundScheduler running the given jobs."""

    name = "scheduler"

    def __init__(self, jobs: list[Job], logger: logging.Logger) -> None:
        self.jobs = list(jobs)
        self.logger = logger
        self._scheduler: Any = None

    def add(self, job: Job) -> None:
        """Register another job (before or after start)."""
        self.jobs.append(job)
        if self._scheduler is not None:
            self._register(job)

    def start(self) -> None:
        """Start the scheduler thread with every enabled job."""
        from apscheduler.schedulers.background import BackgroundScheduler

        self._scheduler = BackgroundScheduler(
            daemon=True, job_defaults={"coalesce": True, "max_instances": 1}
        )
        for job in self.jobs:
            self._register(job)
        self._scheduler.start()

    def stop(self) -> None:
        """Stop the scheduler, waiting for running jobs to finish."""
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None:
            scheduler.shutdown(wait=True)

    def _register(self, job: Job) -> None:
        if job.interval <= 0:
            log_event(self.logger, logging.INFO, "job disabled", job=job.name)
            return
        self._scheduler.add_job(
            self._guarded(job), "interval", seconds=job.interval, id=job.name, name=job.name
        )

    def _guarded(self, job: Job) -> Callable[[], None]:
        def run() -> None:
            try:
                job.func()
            except Exception:
                log_event(self.logger, logging.ERROR, "job failed", exc_info=True, job=job.name)

        return run
