"""What a daemon run adds around the core loop: memory, the code index, the warm pool,
daily notes, checks on commits, and the scheduled maintenance jobs.

Each part fails open: a daemon whose memory index or Docker engine is unavailable
still answers every request, and says why in its log.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

from nexusd.config import Config
from nexusd.daemon import inbox
from nexusd.daemon.logs import log_event
from nexusd.daemon.runtime import Daemon
from nexusd.daemon.scheduler import Job
from nexusd.daemon.worker import Answer, response_key
from nexusd.paths import RepoLayout

DAY = 86_400.0
RECONCILE_SECONDS = 300.0


class Extensions:
    """The optional services of one daemon run, built before the daemon starts."""

    def __init__(self, layout: RepoLayout, config: Config, logger: logging.Logger) -> None:
        self.layout = layout
        self.config = config
        self.logger = logger
        self.memory: Any = None
        self.code: Any = None
        self.pool: Any = None
        if config.memory.enabled:
            try:
                from nexusd.daemon.memory_link import MemoryLink

                self.memory = MemoryLink(layout, config, logger)
            except Exception as exc:
                self._warn("memory disabled", exc)
        if config.code.enabled:
            try:
                from nexusd.daemon.code_link import CodeLink

                self.code = CodeLink(layout, config, logger)
            except Exception as exc:
                self._warn("code index disabled", exc)
        if self.memory is not None and self.code is not None:
            # One socket: the memory server hands the `code_*` ops to the code index.
            self.memory.extra_ops = self.code.handle
        try:
            from nexusd.sandbox.pool import pool_from_config

            self.pool = pool_from_config(config)
        except Exception as exc:
            self._warn("warm pool disabled", exc)

    def _warn(self, what: str, exc: BaseException) -> None:
        log_event(self.logger, logging.WARNING, what, error=f"{type(exc).__name__}: {exc}")

    def services(self) -> Any:
        """The pipeline's view of these services."""
        from nexusd.planner.grounding import Services

        return Services(
            memory=self.memory.service if self.memory else None,
            pool=self.pool,
            code=self.code.index if self.code else None,
            learn=True,  # lessons come from the daemon's cycles only
        )

    def wrap_answer(self, answer: Answer) -> Answer:
        """Answer, then note the answered request in today's daily note."""

        def run(path: Path) -> Any:
            before = response_key(path)
            with self.memory.answering() if self.memory else contextlib.nullcontext():
                outcome = answer(path)
            # Only a response this answer wrote is history: a refusal that kept someone's
            # response (or a write that failed) wrote none, however often it is repeated.
            # (A stat key, never an exception: Path.exists raises for a name too long to be.)
            after = response_key(path) if outcome.response_path is not None else None
            if outcome.status != "skipped" and after is not None and after != before:
                self.daily_entry(outcome)
            return outcome

        return run

    def daily_entry(self, outcome: Any) -> None:
        """One line of history per answered request (never fails the request)."""
        from nexusd.memory.daily import append_daily_entry

        try:
            append_daily_entry(
                self.layout,
                when=datetime.now(),
                cycle=outcome.cycle,
                goal=outcome.title,
                status=outcome.status,
                response_path=outcome.response_path,
            )
        except Exception as exc:
            self._warn("daily note not written", exc)

    def install(self, daemon: Daemon) -> None:
        """Add services, jobs and inbox handlers to a daemon that has not started yet."""
        if self.pool is not None:
            daemon.add_service(self.pool)
        if self.code is not None:
            self.code.stats = daemon.ctx.stats
            # Before memory: started before the socket answers code ops, stopped after it.
            daemon.add_service(self.code)
        if self.memory is not None:
            daemon.add_service(self.memory)
            minutes = float(self.config.memory.optimize_minutes)
            daemon.add_job(Job("memory-optimize", minutes * 60.0, self.memory.optimize))
            daemon.add_job(Job("memory-reconcile", RECONCILE_SECONDS, self.memory.reconcile))
        daemon.add_job(Job("checkpoint-gc", DAY, self._gc))
        if self.config.api.enabled:
            # The API adapts the daemon's services for HTTP clients (an upper layer, so
            # imported here only when it is switched on).
            from nexusd.api.loopback import LoopbackServer
            from nexusd.daemon.serving import daemon_side

            daemon.add_service(
                LoopbackServer(
                    self.layout,
                    self.config,
                    memory=self.memory.service if self.memory else None,
                    code_ops=self.code.handle if self.code else None,
                    stats=daemon.ctx.stats,
                    daemon=daemon_side(),
                )
            )

    def handlers(self) -> dict[str, inbox.Handler]:
        """The hook handlers of this run: its own services only, whatever ran before it."""
        table = dict(inbox.DEFAULT_HANDLERS)
        table["post-commit"] = self._on_commit
        if self.memory is not None or self.code is not None:
            for hook in ("post-merge", "post-checkout"):
                table[hook] = self._resync
        return table

    def _resync(self, layout: RepoLayout, config: Config, event: inbox.InboxEvent) -> None:
        """post-merge, post-checkout: update the code index, reconcile memory."""
        if self.code is not None:
            self.code.kick(event.hook)
        if self.memory is not None:
            self.memory.reconcile()

    def _gc(self) -> None:
        from nexusd.checkpoint.retention import run_gc

        report = run_gc(self.layout, self.config)
        log_event(self.logger, logging.INFO, "checkpoint gc", dropped=len(report.dropped))

    def _on_commit(self, layout: RepoLayout, config: Config, event: inbox.InboxEvent) -> None:
        """post-commit: checkpoint, the `when: commit` checks on it, a daily-note line."""
        from nexusd.memory.writes import add_memory
        from nexusd.sandbox.request_checks import run_critic

        if self.code is not None:
            self.code.kick(event.hook)  # first: the checkpoint or the checks may raise
        checkpoint = inbox.checkpoint_on_commit(layout, config, event)
        report = run_critic(
            layout,
            config,
            treeish=checkpoint.commit if checkpoint else (event.head or "HEAD"),
            checkpoint_id=checkpoint.id if checkpoint else None,
            when="commit",
            pool=self.pool,
        )
        if report.learn is not None:
            report.learn()  # a commit is an attempt of its own: its checks teach too
        checks = ", ".join(f"{name}: {status}" for name, status in report.statuses) or "none"
        head = (event.head or "")[:12]
        text = f"commit `{head}`; checkpoint `{checkpoint.id if checkpoint else '-'}`"
        try:
            add_memory(layout, f"{text}; checks: {checks}", category="commit", daily=True)
        except Exception as exc:
            self._warn("daily note not written", exc)
