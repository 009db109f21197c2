"""subprocess backend: the last resort. NOT isolated, and every result says so.

What it does contain: the check runs in a temporary export of the snapshot (not
the live tree), in its own session whose whole process group is killed at the
timeout and when the main process exits; a scrubbed environment (PATH, HOME =
the workspace, LANG, TMPDIR and the check's `env` allowlist); rlimits on address
space, CPU seconds and process count; and, when nexusd runs as root, the check
runs as uid 65534 ("nobody") so it cannot write root-owned files.

What it cannot contain (use docker or bwrap for these):
- the network: the check can connect anywhere the host can;
- the filesystem: it can read every file its user can read, and write every
  file its user can write (as a non-root user: your home directory and your
  live repository!);
- processes that leave the group (`setsid`, double fork into a new session) or
  that the user runs elsewhere survive the kill;
- RLIMIT_NPROC counts every process of the user on the host, not just the
  check's, and root is exempt from it; RLIMIT_AS also refuses large *virtual*
  mappings (some runtimes reserve gigabytes up front) and is not a cgroup;
- other users' processes, IPC, /tmp and devices are shared with the host.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from nexusd.sandbox.process import (
    drop_to,
    host_result,
    limits_for,
    run_tree,
    scrubbed_env,
)
from nexusd.sandbox.result import NOT_ISOLATED_WARNING, CheckResult
from nexusd.sandbox.spec import CheckSpec
from nexusd.sandbox.workspace import extract, scratch_dir

NAME = "subprocess"


def run(spec: CheckSpec, tree_tar: bytes, *, reason: str = "") -> CheckResult:
    """Run one check as a plain child process on an exported tree (not isolated)."""
    uid = drop_to()
    with tempfile.TemporaryDirectory(prefix="nexusd-run-", dir=scratch_dir(len(tree_tar))) as tmp:
        Path(tmp).chmod(0o711)
        workspace = Path(tmp) / "workspace"
        extract(tree_tar, workspace, owner=uid)
        outcome = run_tree(
            ["/bin/sh", "-c", spec.run],
            cwd=str(workspace),
            env=scrubbed_env(str(workspace), spec.env),
            timeout=spec.timeout,
            limits=limits_for(spec.timeout, spec.memory_bytes, spec.pids, spec.cpus),
            output_limit=spec.output_limit,
            uid=uid,
        )
    return host_result(
        spec.name,
        outcome,
        backend=NAME,
        isolated=False,
        reason=reason,
        warnings=(NOT_ISOLATED_WARNING,),
    )
