"""The daemon process: take the lock, write the pid file, run until SIGTERM/SIGINT/SIGHUP.

`run_daemon` is what `nexusd start --foreground` calls (directly under a service
manager, or in the detached child `nexusd start` spawns).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any, cast

from nexusd import __version__
from nexusd.config import Config
from nexusd.daemon.answering import answer_claimed
from nexusd.daemon.extensions import Extensions
from nexusd.daemon.journal import AnswerJournal
from nexusd.daemon.lock import DaemonLock, remove_pid, write_pid
from nexusd.daemon.logs import close_logging, log_event, setup_logging
from nexusd.daemon.reload import ConfigWatch, follow_config
from nexusd.daemon.runtime import Daemon, DaemonContext
from nexusd.daemon.status import DaemonStats, write_status
from nexusd.daemon.worker import Answer
from nexusd.models.budget import AnswerStart
from nexusd.paths import RepoLayout

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def pipeline_answer(layout: RepoLayout, config: Config, services: Any = None) -> Answer:
    """`answer(path)` bound to this repository: the planner pipeline behind the request's claim."""

    def answer(path: Path) -> Any:
        # planner.timeout_ms counts from here: the worker has just picked the request up.
        start = AnswerStart.now("the daemon picked up the request")
        return answer_claimed(path, layout, config, services=services, start=start)

    return cast(Answer, answer)


def run_daemon(layout: RepoLayout, config: Config, *, log_to_stderr: bool) -> int:
    """Run the daemon in this process until a stop signal; returns the exit code."""
    layout.nexus_dir.mkdir(parents=True, exist_ok=True)
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    lock = DaemonLock(layout.lockfile, layout.pidfile)
    lock.acquire()  # raises DaemonError (exit 7) when another daemon runs
    pid = os.getpid()
    logger = setup_logging(layout.log_file, config.daemon.log_level, to_stderr=log_to_stderr)
    stats = DaemonStats(pid)
    stop_event = StopEvent()
    previous = _install_signal_handlers(stop_event)
    daemon: Daemon | None = None
    failed = False
    try:
        write_pid(layout.pidfile, pid)
        log_event(
            logger,
            logging.INFO,
            "daemon starting",
            pid=pid,
            version=__version__,
            root=str(layout.root),
        )

        def build(cfg: Config) -> Daemon:
            logger.setLevel(cfg.daemon.log_level.upper())
            ctx = DaemonContext(layout, cfg, logger, stats, stop_event)
            extensions = Extensions(layout, cfg, logger)
            answer = pipeline_answer(layout, cfg, extensions.services())
            journal = AnswerJournal(layout, extensions.daily_entry)
            journal.recover(logger)  # daily lines a killed run owed, before anything is answered
            wrapped = journal.wrap(extensions.wrap_answer(answer))
            built = Daemon(ctx, wrapped, handlers=extensions.handlers())
            extensions.install(built)
            return built

        watch = ConfigWatch(layout)
        daemon = build(config)
        daemon.start()
        while not stop_event.wait(1.0):
            daemon = follow_config(watch, daemon, build, stats, logger)
        log_event(logger, logging.INFO, "daemon stopping", signal=stop_event.reason)
        return 0
    except Exception as exc:
        failed = True
        stats.record_error(None, f"{type(exc).__name__}: {exc}")
        log_event(logger, logging.ERROR, "daemon failed", exc_info=True, error=str(exc))
        raise
    finally:
        if daemon is not None:
            daemon.stop()
        if failed:
            stats.set(state="failed")
        write_status(layout.state_dir, stats)
        remove_pid(layout.pidfile, pid)
        log_event(logger, logging.INFO, "daemon stopped", pid=pid)
        _restore_signal_handlers(previous)
        close_logging()
        lock.release()


class StopEvent(threading.Event):
    """The daemon's stop flag, remembering which signal set it."""

    reason: str | None = None


def _install_signal_handlers(stop_event: StopEvent) -> dict[int, Any]:
    previous: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous  # signals are only delivered to the main thread

    def handler(signum: int, frame: FrameType | None) -> None:
        # No logging here: the handler may interrupt a thread holding the logging lock.
        stop_event.reason = signal.Signals(signum).name
        stop_event.set()

    for sig in STOP_SIGNALS:
        previous[sig] = signal.signal(sig, handler)
    return previous


def _restore_signal_handlers(previous: dict[int, Any]) -> None:
    for sig, old in previous.items():
        signal.signal(sig, old)
