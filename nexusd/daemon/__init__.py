"""The daemon: lifecycle, watcher, work queue, scheduler jobs.

main.py          the process: lock, pid file, signals, run until stopped
runtime.py       Daemon: the services (start/stop uniformly) and jobs; extension points
watcher.py       watchdog observer on the watched folders (+ the hook inbox)
debounce.py      hands a path on once quiet, stable and closed
work_queue.py    bounded, de-duplicating queue of request paths
worker.py        the one thread answering requests (planner pipeline)
scheduler.py     periodic jobs on APScheduler (rescan, and whatever is added)
inbox_runner.py  drains git-hook events (`inbox.py`) on its own thread
status.py        counters published to <git-dir>/nexus/state/status.json
logs.py          JSON-lines log with rotation; tail and follow
lock.py          flock + pid file: one daemon per repository
control.py       start detached / stop / describe, for the CLI
unit.py          systemd user unit and launchd agent definitions
"""

from __future__ import annotations
