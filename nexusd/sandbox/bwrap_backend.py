"""bubblewrap backend: read-only system dirs, a temp copy of the tree as the only writable place.

Mounted: /usr (and the /bin, /lib… symlinks or dirs), /etc read-only, fresh
/proc, /dev and /tmp (tmpfs), the workspace copy at /workspace, and any
`sandbox.ro_binds`; nothing else of the host (no home, no live repository).

All namespaces are unshared (no network unless the check asks for it), the
sandbox dies with nexusd (`--die-with-parent`) and gets a new session (no
terminal injection). Memory, CPU time and processes are bounded with rlimits
(RLIMIT_AS, RLIMIT_CPU, RLIMIT_NPROC); as root nexusd starts bwrap as uid
65534 so that RLIMIT_NPROC applies (root is exempt from it). Killing bwrap at
the timeout kills the sandbox's pid namespace, hence every process in it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from nexusd.errors import SandboxError
from nexusd.sandbox.process import (
    Outcome,
    drop_to,
    host_result,
    limits_for,
    run_tree,
    scrubbed_env,
)
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.spec import WORKDIR, CheckSpec
from nexusd.sandbox.workspace import extract, workspace_dir

NAME = "bwrap"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def bwrap_path() -> str | None:
    """The bwrap executable on PATH, if any."""
    return shutil.which("bwrap")


@functools.cache
def usable() -> tuple[bool, str]:
    """(True, version) when bwrap can create its namespaces here, else (False, why)."""
    exe = bwrap_path()
    if exe is None:
        return False, "bwrap is not installed"
    uid = drop_to()
    proc = subprocess.run(
        [exe, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
        capture_output=True,
        text=True,
        user=uid,
        group=uid,
        extra_groups=[] if uid is not None else None,
        check=False,
        timeout=10,
    )
    if proc.returncode != 0:
        return False, f"bwrap cannot create namespaces: {proc.stderr.strip()}"
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return True, version.stdout.strip()


def bwrap_argv(
    exe: str,
    workspace: Path,
    command: str,
    *,
    network: bool,
    ro_binds: Sequence[str] = (),
    block_fd: int | None = None,
) -> list[str]:
    """The bwrap command line that runs `command` in `workspace` mounted at /workspace.

    With `block_fd`, bwrap builds the sandbox, then waits for a byte on that descriptor
    before it starts `command`.
    """
    argv = [exe, "--unshare-all", "--die-with-parent", "--new-session"]
    if network:
        argv.append("--share-net")
    if block_fd is not None:
        argv += ["--block-fd", str(block_fd)]
    for path in _SYSTEM_DIRS:
        if Path(path).is_symlink():
            argv += ["--symlink", str(Path(path).readlink()), path]
        elif Path(path).is_dir():
            argv += ["--ro-bind", path, path]
    # One read-only bind of /etc (each extra mount costs ~0.5 ms); secrets in it are
    # root-only files, and as root nexusd runs the sandbox as uid 65534.
    argv += ["--ro-bind", "/etc", "/etc"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # After /tmp's tmpfs: bound before it, a folder under /tmp (a virtualenv there) was
    # hidden by it.
    for path in ro_binds:
        argv += ["--ro-bind-try", path, path]
    argv += ["--bind", str(workspace), WORKDIR, "--chdir", WORKDIR]
    # Everything not bound above (the root tmpfs bwrap builds) becomes read-only.
    argv += ["--remount-ro", "/", "--", "/bin/sh", "-c", command]
    return argv


def run(
    spec: CheckSpec, tree_tar: bytes, *, ro_binds: Sequence[str] = (), reason: str = ""
) -> CheckResult:
    """Run one check in a bubblewrap sandbox on an exported tree."""
    ok, why = usable()
    exe = bwrap_path()
    if not ok or exe is None:
        raise SandboxError(
            f"bubblewrap is not usable: {why}",
            hint='run `sudo bash "$(nexusd doctor --setup-script)"` (installs bubblewrap),'
            " or set sandbox.backend",
        )
    uid = drop_to()
    with workspace_dir("bwrap", len(tree_tar)) as tmp:
        workspace = Path(tmp) / "workspace"
        # The sandbox user must be able to reach the workspace it binds.
        Path(tmp).chmod(0o711)
        workspace.mkdir()
        # bwrap binds the (still empty) workspace and builds its namespaces while the tree
        # is unpacked into it, then waits on `gate` until the tree is complete.
        gate, release = os.pipe()
        unclosed = {gate, release}

        def close(fd: int) -> None:
            if fd in unclosed:
                unclosed.discard(fd)
                os.close(fd)

        def unpack() -> None:
            close(gate)
            extract(tree_tar, workspace, owner=uid)
            try:
                os.write(release, b"go")
            except BrokenPipeError:
                # bwrap exited before the tree was ready (a bind it could not make): its exit
                # and stderr are the check's result, not a traceback.
                return
            # On a failed unpack `release` stays open until bwrap is killed: its EOF would
            # start the check on a partial tree.
            close(release)

        # Limits are on bwrap itself and inherited by the sandbox; nproc counts bwrap's two.
        limits = limits_for(spec.timeout, spec.memory_bytes, spec.pids + 2, spec.cpus)
        argv = bwrap_argv(
            exe, workspace, spec.run, network=spec.network, ro_binds=ro_binds, block_fd=gate
        )
        try:
            outcome = run_tree(
                argv,
                cwd=str(workspace),
                env=scrubbed_env(WORKDIR, spec.env),
                timeout=spec.timeout,
                limits=limits,
                output_limit=spec.output_limit,
                uid=uid,
                pass_fds=(gate,),
                spawned=unpack,
            )
        finally:
            for fd in list(unclosed):
                close(fd)
    failure = setup_failure(outcome)
    if failure:
        raise SandboxError(
            f"bubblewrap could not build the check's sandbox, the check did not run: {failure}",
            hint=_setup_hint(failure, uid),
        )
    return host_result(spec.name, outcome, backend=NAME, isolated=True, reason=reason)


def setup_failure(outcome: Outcome) -> str:
    """bwrap's own error when it failed before the check started, else ''.

    bwrap then exits 1 with one `bwrap: …` line on stderr and nothing on stdout; read as
    the check's failure, it sent the user to fix code that never ran."""
    if outcome.exit_code != 1 or outcome.timed_out or outcome.stdout.total:
        return ""
    head, tail, _ = outcome.stderr.parts()
    lines = (head + tail).strip().splitlines()
    return lines[0] if len(lines) == 1 and lines[0].startswith("bwrap: ") else ""


def _setup_hint(failure: str, uid: int | None) -> str:
    if "Can't find source path" in failure and "Permission denied" in failure:
        who = "uid 65534 (nexusd runs bwrap checks so when it is root)" if uid else "your user"
        return (
            f"a path in sandbox.ro_binds cannot be read by {who}: make it and its parent "
            "folders readable (chmod o+rx), move it (e.g. under /opt), or remove it"
        )
    if "Resource temporarily unavailable" in failure:
        return "the process limit is too low for the sandbox to start: raise the check's `pids`"
    return "check sandbox.ro_binds and run `nexusd doctor`; or set sandbox.backend"
