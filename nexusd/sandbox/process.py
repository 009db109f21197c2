"""Run one local process tree under rlimits, capture bounded output, kill it all at the end.

Shared by the bubblewrap and subprocess backends. The child gets its own session
(process group), so the whole group is SIGKILLed at the timeout *and* after the
main process exits (background processes it left behind). When nexusd runs as
root the child drops to uid/gid 65534 ("nobody"): root is exempt from
RLIMIT_NPROC, so without the drop a fork bomb would not be bounded.
"""

from __future__ import annotations

import math
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from nexusd.processes import kill_group
from nexusd.sandbox.result import CheckResult, OutputCapture, captured
from nexusd.sandbox.workspace import SANDBOX_UID

# How long to keep reading after the process died, for output still in the pipes.
DRAIN_SECONDS = 1.0
_MEMORY_MARKERS = re.compile(
    r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|"
    r"memory allocation of \d+ bytes failed",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Limits:
    """Kernel limits for the child: address space, CPU seconds, processes.

    `cpus` is recorded but not enforced locally: without cgroups the only tool is
    CPU pinning, which made every check wait for one (possibly busy) core.
    """

    memory_bytes: int
    cpu_seconds: int
    nproc: int
    cpus: float


@dataclass
class Outcome:
    """What happened to a local process tree."""

    exit_code: int | None
    timed_out: bool
    duration_ms: int
    stdout: OutputCapture
    stderr: OutputCapture
    signal: int | None = None


def limits_for(timeout: float, memory_bytes: int, pids: int, cpus: float) -> Limits:
    """Limits matching a check: CPU time is the timeout times the CPUs granted, plus 1 s."""
    return Limits(
        memory_bytes=memory_bytes,
        cpu_seconds=math.ceil(timeout * max(cpus, 0.01)) + 1,
        nproc=max(pids, 1),
        cpus=cpus,
    )


def drop_to() -> int | None:
    """The uid to run checks as: 65534 when we are root, else None (stay as ourselves)."""
    return SANDBOX_UID if os.geteuid() == 0 else None


def limited_argv(argv: Sequence[str], limits: Limits, uid: int | None = None) -> list[str]:
    """`argv` under prlimit (and setpriv to drop to `uid`), exec'd in a chain.

    No preexec_fn and no Popen(user=): both make Python fork() instead of
    vfork(), which is slower and unsafe with threads.
    """
    wrapped = []
    if uid is not None:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        wrapped += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    wrapped += [
        prlimit,
        f"--as={limits.memory_bytes}",
        f"--cpu={limits.cpu_seconds}",
        f"--nproc={limits.nproc}",
        "--core=0",
        "--",
    ]
    return wrapped + list(argv)


def run_tree(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    limits: Limits,
    output_limit: int,
    uid: int | None = None,
    pass_fds: Sequence[int] = (),
    spawned: Callable[[], None] | None = None,
) -> Outcome:
    """Run `argv` in its own session under `limits`; kill the group at `timeout` and at exit.

    `spawned` runs right after the child starts, for work that can overlap its start-up
    (bwrap builds its namespaces while the tree is unpacked); if it raises, the child's
    whole group is killed and the error propagates.
    """
    out, err = OutputCapture(output_limit), OutputCapture(output_limit)
    started = time.monotonic()
    proc = subprocess.Popen(
        limited_argv(argv, limits, uid),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        pass_fds=tuple(pass_fds),
    )
    assert proc.stdout is not None and proc.stderr is not None
    if uid is not None:
        # The check may reopen its output (`> /dev/stderr`, via /proc/self/fd): the pipes
        # must belong to the user it runs as. bwrap starts the check only once `spawned`
        # opens its gate, so this lands first.
        for pipe in (proc.stdout, proc.stderr):
            os.fchown(pipe.fileno(), uid, uid)
    if spawned is not None:
        try:
            spawned()
        except BaseException:
            kill_group(proc.pid)
            proc.communicate()
            raise
    try:
        timed_out = _pump(
            proc, {proc.stdout.fileno(): out, proc.stderr.fileno(): err}, started + timeout
        )
    finally:
        # Also on Ctrl-C or a signal turned into an exception: the check's group must not
        # outlive nexusd (the subprocess backend has no pid namespace to die with it).
        proc.stdout.close()
        proc.stderr.close()
        kill_group(proc.pid)
        code = proc.wait()
    duration = int((time.monotonic() - started) * 1000)
    sig = -code if code < 0 else None
    return Outcome(
        exit_code=code if code >= 0 else 128 - code,
        timed_out=timed_out,
        duration_ms=duration,
        stdout=out,
        stderr=err,
        signal=sig,
    )


def _pump(
    proc: subprocess.Popen[bytes], captures: dict[int, OutputCapture], deadline: float
) -> bool:
    """Read both pipes until they close (or DRAIN_SECONDS after the main process ended);
    kill the group at `deadline`. True when the deadline killed it."""
    assert proc.stdout is not None and proc.stderr is not None
    timed_out = False
    drain_until: float | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        while sel.get_map():
            now = time.monotonic()
            if drain_until is None:
                if proc.poll() is not None:
                    # Main process gone: whatever it left in its group goes too.
                    kill_group(proc.pid)
                    drain_until = now + DRAIN_SECONDS
                elif now >= deadline:
                    kill_group(proc.pid)
                    timed_out = True
                    drain_until = now + DRAIN_SECONDS
            elif now >= drain_until:
                break
            for key, _ in sel.select(timeout=0.05 if drain_until else min(0.25, deadline - now)):
                data = os.read(key.fd, 65_536)
                if data:
                    captures[key.fd].feed(data)
                else:
                    sel.unregister(key.fileobj)
    return timed_out


def memory_exhausted(outcome: Outcome, timed_out: bool) -> bool:
    """Did the tree die for memory? (rlimit failures print it; the OOM killer sends SIGKILL)."""
    if timed_out or outcome.exit_code == 0:
        return False
    if outcome.signal == signal.SIGKILL:
        return True
    head, tail, _ = outcome.stderr.parts()
    return bool(_MEMORY_MARKERS.search(head) or _MEMORY_MARKERS.search(tail))


def scrubbed_env(home: str, allow: Sequence[str], path: str | None = None) -> dict[str, str]:
    """PATH, HOME, LANG and the check's allowlisted variables; nothing else leaks in."""
    env = {
        "PATH": path or os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TMPDIR": "/tmp",
    }
    for name in allow:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def host_result(
    name: str,
    outcome: Outcome,
    *,
    backend: str,
    isolated: bool,
    reason: str,
    warnings: tuple[str, ...] = (),
) -> CheckResult:
    """A CheckResult for a check run as a host process tree (bwrap or plain subprocess)."""
    return CheckResult(
        name=name,
        backend=backend,
        exit_code=outcome.exit_code,
        duration_ms=outcome.duration_ms,
        timed_out=outcome.timed_out,
        oom_killed=memory_exhausted(outcome, outcome.timed_out),
        isolated=isolated,
        reason=reason,
        warnings=warnings,
        **captured(outcome.stdout, outcome.stderr),
    )
