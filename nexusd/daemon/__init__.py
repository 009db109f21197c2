"""The daemon: lifecycle, watcher, work queue, scheduler jobs."""

from __future__ import annotations
