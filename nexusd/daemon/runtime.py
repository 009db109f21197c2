"""The daemon's parts wired together: services started and stopped uniformly, periodic jobs.

Extending the daemon (memory search server, retention jobs, …):

    daemon = Daemon(ctx, answer)
    daemon.add_service(MySocketServer(...))    # anything with name, start(), stop()
    daemon.add_job(Job("memory-optimize", 600, optimize))

Services start in the order added (the core ones first) and stop in reverse, so
an added service starts after the watcher and stops before it. `Extensions.install`
in `nexusd.daemon.extensions` is the one place that adds the optional ones.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from nexusd.config import Config
from nexusd.daemon.claims import sweep_claims
from nexusd.daemon.debounce import Debouncer
from nexusd.daemon.inbox import DEFAULT_HANDLERS, Handler
from nexusd.daemon.inbox_runner import InboxRunner
from nexusd.daemon.logs import log_event
from nexusd.daemon.scheduler import Job, Scheduler
from nexusd.daemon.status import DaemonStats, StatusWriter, utc_now
from nexusd.daemon.watcher import RequestWatcher, closes_are_reported
from nexusd.daemon.work_queue import WorkQueue
from nexusd.daemon.worker import Answer, HandledFiles, Worker
from nexusd.paths import RepoLayout
from nexusd.protocol.naming import RESPONSE_SUFFIX

STALE_TMP_SECONDS = 60.0


class Service(Protocol):
    """A long-lived part of the daemon with one owner thread (or none)."""

    name: str

    def start(self) -> None:
        """Start; return once running."""

    def stop(self) -> None:
        """Stop and join every thread started by `start`."""


@dataclass(frozen=True)
class DaemonContext:
    """What every part of one daemon run shares."""

    layout: RepoLayout
    config: Config
    logger: logging.Logger
    stats: DaemonStats
    stop_event: threading.Event


class Daemon:
    """One daemon run: the core services (status, worker, debouncer, inbox, watcher, scheduler)."""

    def __init__(
        self,
        ctx: DaemonContext,
        answer: Answer,
        handlers: Mapping[str, Handler] = DEFAULT_HANDLERS,
    ) -> None:
        self.ctx = ctx
        cfg = ctx.config
        self.queue = WorkQueue(cfg.watch.queue_size)
        self.handled = HandledFiles()
        self.status_writer = StatusWriter(ctx.layout.state_dir, ctx.stats)
        self.worker = Worker(
            self.queue,
            answer,
            ctx.stats,
            ctx.logger,
            handled=self.handled,
            on_overflow=self.rescan,
        )
        debounce = float(cfg.watch.debounce_ms) / 1000.0
        self.debouncer = Debouncer(
            self._enqueue,
            debounce=debounce,
            write_grace=float(cfg.watch.write_grace_ms) / 1000.0,
            track_closes=closes_are_reported(),
            settle=float(cfg.watch.settle_ms) / 1000.0,
        )
        self.inbox = InboxRunner(ctx.layout, cfg, ctx.logger, settle=debounce, handlers=handlers)
        self.watcher = RequestWatcher(
            ctx.layout.root,
            [Path(p) for p in cfg.watch.paths],
            self.debouncer,
            ctx.logger,
            extra_dirs={ctx.layout.inbox_dir: self.inbox.kick},
            on_watch_change=self._publish_watch,
        )
        self.scheduler = Scheduler(
            [Job("rescan", float(cfg.watch.rescan_seconds), self.rescan)], ctx.logger
        )
        self.services: list[Service] = [
            self.status_writer,
            self.worker,
            self.debouncer,
            self.inbox,
            self.watcher,
            self.scheduler,
        ]
        self._started: list[Service] = []

    def add_service(self, service: Service) -> None:
        """Add a service; it starts after the core ones and stops before them."""
        self.services.append(service)

    def add_job(self, job: Job) -> None:
        """Run `job.func` every `job.interval` seconds inside the daemon."""
        self.scheduler.add(job)

    def start(self) -> None:
        """Start every service, then the startup scan; the daemon is ready when this returns."""
        layout = self.ctx.layout
        layout.inbox_dir.mkdir(parents=True, exist_ok=True)
        for folder in self.watcher.folders:
            _remove_stale_temp_files(folder)
        _sweep_claims(layout)
        for service in self.services:
            service.start()
            self._started.append(service)
        found = self.watcher.scan()
        self.inbox.kick()
        self._publish_watch()
        self.ctx.stats.set(state="running", ready_at=utc_now())
        log_event(
            self.ctx.logger,
            logging.INFO,
            "daemon ready",
            watched=self.watcher.watched(),
            missing=self.watcher.missing(),
            startup_requests=found,
        )

    @property
    def running(self) -> bool:
        """Whether its services are started (`start` ran and `stop` has not since)."""
        return bool(self._started)

    def stop(self, *, reloading: bool = False) -> None:
        """Stop services in reverse order; the worker finishes its request in flight.

        `reloading`: another run with a new configuration takes over in this process, so the
        published state stays `running` (`nexusd status`, `nexusd start` read it).
        """
        if not self._started:
            return
        if not reloading:
            self.ctx.stats.set(state="stopping")
        while self._started:
            service = self._started.pop()
            if service is self.status_writer and not reloading:
                self.ctx.stats.set(state="stopped", stopped_at=utc_now(), queued=len(self.queue))
            try:
                service.stop()
            except Exception:
                log_event(
                    self.ctx.logger,
                    logging.ERROR,
                    "service failed to stop",
                    exc_info=True,
                    service=service.name,
                )

    def rescan(self) -> None:
        """Find requests missed by the watcher (or written while a folder was not watched)."""
        found = self.watcher.scan(known=self.handled.is_current)
        for folder in self.watcher.folders:
            _remove_stale_temp_files(folder)
        _sweep_claims(self.ctx.layout)
        self.ctx.stats.forget_dropped(lambda path: not os.path.lexists(path))
        # A request deleted (and not during an answer: the worker forgets those itself) is
        # handled anew if it comes back, as its response then says.
        self.handled.forget_gone(lambda path: not os.path.lexists(path))
        self.inbox.kick()
        self.ctx.stats.add("rescans")
        self._publish_watch()
        if found:
            log_event(self.ctx.logger, logging.INFO, "rescan found requests", count=found)

    def _enqueue(self, path: Path) -> None:
        if self.handled.is_current(path):
            # An event for a file whose stat key is unchanged: an edit that kept size and
            # mtime (`cp -p`, `touch -d`) is told apart by its content (the rescan, which
            # sees no event, keeps to the cheap stat check).
            if not self.handled.content_changed(path):
                return
            self.handled.forget(path)
        if not self.queue.put(path):
            # Counted on the daemon's figures, not the queue's: a reload builds a new run and
            # queue whose start-up scan hands every request on again, answered ones too.
            self.ctx.stats.count_dropped(path)
        self.ctx.stats.set(queued=len(self.queue))

    def _publish_watch(self) -> None:
        self.ctx.stats.set(watched=self.watcher.watched(), pending_watch=self.watcher.missing())


def _remove_stale_temp_files(folder: Path) -> None:
    """Delete temporary response files a killed daemon left (`.<name>_plan_response.md.*.tmp`,
    `.<name>-plan_response.md.*.tmp`, and the shortened ones of long names)."""
    if not folder.is_dir():
        return
    now = time.time()
    for tmp in folder.glob(f".*{RESPONSE_SUFFIX}.*.tmp"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > STALE_TMP_SECONDS:
                tmp.unlink()


def _sweep_claims(layout: RepoLayout) -> None:
    """Remove the claim files of `nexusd plan` runs that were killed while answering."""
    with contextlib.suppress(OSError):
        sweep_claims(layout)
