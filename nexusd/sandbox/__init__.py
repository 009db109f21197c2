"""Sandboxed checks: docker, bubblewrap and subprocess backends, result classification.

Public API (see README.md beside this file):
- `runner.run_checks(layout, config, treeish=, names=, when=, pool=)` -> tuple[CheckResult, ...]
- `runner.attach_results(layout, commit, results)`, `runner.overall_status(results)`
- `result.CheckResult`; `critic.classify(result)` -> Failure, `critic.reflect(result)` -> str
- `lessons.pending_lessons(layout, results)` -> tuple[Lesson, ...]
- `probe.report(config)` (doctor), `probe.choose(config)`; `pool.pool_from_config(config)`
- `docker_backend.sweep(client)` removes containers left by dead nexusd processes.
"""

from __future__ import annotations
