"""subprocess backend: the last resort. NOT isolated, and every result says so.

What it does contain: the check runs in a temporary export of the snapshot (not
the live tree), in its own session whose whole process group is killed at the
timeout and when the main process exits; a scrubbed environment (PATH, HOME =
the workspace, LANG, TMPDIR and the check's `env` allowlist); rlimits on address
space, CPU seconds and process count.

It runs as the user who runs nexusd, also when that is root. It used to drop to
uid 65534 ("nobody") as root, which made a user's own tools unusable: a
virtualenv under /root (mode 0700) failed with exit 126, "Permission denied",
for a reason the user could not see. Without namespaces that drop bought little
(nobody still reaches the network, /tmp and every world-writable file), so the
check gets the user's tools, and a root run says in its result what root loses.

What it cannot contain (use docker or bwrap for these):
- the network: the check can connect anywhere the host can;
- the filesystem: it can read every file its user can read, and write every
  file its user can write (as a non-root user: your home directory and your
  live repository!);
- processes that leave the group (`setsid`, double fork into a new session) or
  that the user runs elsewhere survive the kill;
- RLIMIT_NPROC counts every process of the user on the host, not just the
  check's, and root is exempt from it (a root run's result warns so); RLIMIT_AS
  also refuses large *virtual* mappings (some runtimes reserve gigabytes up
  front) and is not a cgroup;
- other users' processes, IPC, /tmp and devices are shared with the host.
"""

from __future__ import annotations

import os
from pathlib import Path

from nexusd.sandbox.process import (
    host_result,
    limits_for,
    run_tree,
    scrubbed_env,
)
from nexusd.sandbox.result import NOT_ISOLATED_WARNING, CheckResult
from nexusd.sandbox.spec import CheckSpec
from nexusd.sandbox.workspace import extract, workspace_dir

NAME = "subprocess"
AS_ROOT_WARNING = (
    "ran as root (the user running nexusd): a check that runs as root can write any file "
    "on the host, and the process limit (pids) does not bind root; only the timeout stops "
    "a fork bomb. Run nexusd as a normal user, or use docker or bwrap (`nexusd doctor`)."
)


def run(spec: CheckSpec, tree_tar: bytes, *, reason: str = "") -> CheckResult:
    """Run one check as a plain child process on an exported tree (not isolated).

    The child runs as the user running nexusd, so the user's own tools work (see above)."""
    with workspace_dir("run", len(tree_tar)) as tmp:
        workspace = Path(tmp) / "workspace"
        extract(tree_tar, workspace)
        outcome = run_tree(
            ["/bin/sh", "-c", spec.run],
            cwd=str(workspace),
            env=scrubbed_env(str(workspace), spec.env),
            timeout=spec.timeout,
            limits=limits_for(spec.timeout, spec.memory_bytes, spec.pids, spec.cpus),
            output_limit=spec.output_limit,
        )
    return host_result(
        spec.name,
        outcome,
        backend=NAME,
        isolated=False,
        reason=reason,
        warnings=(NOT_ISOLATED_WARNING, *((AS_ROOT_WARNING,) if os.geteuid() == 0 else ())),
    )
