"""Docker backend: one fresh container per check, through the docker SDK (imported lazily).

Each container: no network (`network_mode=none`), memory/CPU/pids limits, uid
65534, all capabilities dropped, `no-new-privileges`, no host mounts — the tree
goes in with `put_archive` as /workspace owned by 65534 — tmpfs on /tmp and
/var/tmp, logging driver `none` (output is streamed and bounded by nexusd, never
stored by the engine), killed at the timeout and removed in a `finally`.
Containers carry the label `nexusd=1` and the owner's pid; `sweep()` removes
those whose owner is gone (a crashed nexusd), so none leak.

The root filesystem is writable but owned by root: the engine refuses
`put_archive` on a `read_only` rootfs, and an anonymous volume for /workspace
would be root-owned, so the non-root user is what keeps writes inside
/workspace (and the tmpfs mounts).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from nexusd.errors import SandboxError
from nexusd.processes import pid_alive
from nexusd.sandbox.result import CheckResult, OutputCapture, captured
from nexusd.sandbox.spec import WORKDIR, CheckSpec
from nexusd.sandbox.workspace import SANDBOX_UID, retag

NAME = "docker"
LABEL = "nexusd"
SETUP_HINT = (
    'run `sudo bash "$(nexusd doctor --setup-script)"` (installs docker.io, starts dockerd,'
    " builds the image)"
)
API_TIMEOUT = 3600
_swept = False
_sweep_lock = threading.Lock()


def connect(timeout: float = 5.0) -> Any:
    """A docker client that answered a ping, or SandboxError saying how to get one."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a dependency
        raise SandboxError("the docker Python SDK is missing", hint="pip install docker") from exc
    try:
        client = docker.from_env(timeout=int(max(timeout, 1)))
        client.ping()
        # A short timeout for the ping only: output streams may be silent for minutes.
        client.api.timeout = API_TIMEOUT
    except Exception as exc:
        raise SandboxError(
            f"the Docker Engine is not reachable ({type(exc).__name__}: {exc})",
            hint=SETUP_HINT + "; or set sandbox.backend to bwrap or subprocess",
        ) from exc
    return client


def require_image(client: Any, image: str) -> None:
    """Raise SandboxError with the fix when `image` is not present locally."""
    import docker.errors

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(
            f"the image {image} is not present in the Docker Engine",
            hint=SETUP_HINT + f" (or `docker pull {image}` where pulling is possible)",
        ) from exc


def labels() -> dict[str, str]:
    """Labels that mark a container as ours and name its owning process."""
    return {LABEL: "1", f"{LABEL}.pid": str(os.getpid()), f"{LABEL}.host": socket.gethostname()}


def sweep(client: Any) -> int:
    """Remove our containers whose owning process is gone; return how many were removed."""
    removed = 0
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        tags = container.labels
        try:
            pid = int(tags.get(f"{LABEL}.pid", "0"))
        except ValueError:
            pid = 0
        if tags.get(f"{LABEL}.host") == socket.gethostname() and pid > 0 and pid_alive(pid):
            continue
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
            removed += 1
    return removed


def sweep_once(client: Any) -> None:
    """Sweep stale containers the first time this process uses the engine."""
    global _swept
    with _sweep_lock:
        if not _swept:
            sweep(client)
            _swept = True


def container_kwargs(spec: CheckSpec, command: list[str]) -> dict[str, Any]:
    """Arguments of `containers.create` enforcing the sandbox's contract."""
    from docker.types import LogConfig

    tmpfs_opts = "rw,nosuid,nodev,size=64m,mode=1777"
    return {
        "image": spec.image,
        "command": command,
        "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
        "working_dir": WORKDIR,
        "environment": environment(spec),
        "network_disabled": not spec.network,
        "network_mode": None if spec.network else "none",
        "mem_limit": spec.memory_bytes,
        "memswap_limit": spec.memory_bytes,
        "nano_cpus": int(spec.cpus * 1e9),
        "pids_limit": spec.pids,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "tmpfs": {"/tmp": tmpfs_opts, "/var/tmp": tmpfs_opts},
        "labels": labels(),
        "log_config": LogConfig(type="none"),
        "stdin_open": False,
        "tty": False,
    }


def environment(spec: CheckSpec) -> dict[str, str]:
    """HOME=/workspace, LANG, and the check's allowlisted variables from our env. PATH is
    the image's own: official images keep their tools off the system folders (cargo in
    /usr/local/cargo/bin, go in /usr/local/go/bin) and put them on PATH with ENV."""
    env = {"HOME": WORKDIR, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    env.update({name: os.environ[name] for name in spec.env if name in os.environ})
    return env


def pump(
    stream: Iterator[tuple[bytes | None, bytes | None]], out: OutputCapture, err: OutputCapture
) -> threading.Thread:
    """Read a demuxed docker stream into two captures on a thread (joined by the caller)."""

    def drain() -> None:
        with contextlib.suppress(Exception):
            for chunk_out, chunk_err in stream:
                if chunk_out:
                    out.feed(chunk_out)
                if chunk_err:
                    err.feed(chunk_err)

    thread = threading.Thread(target=drain, name="nexusd-docker-output", daemon=True)
    thread.start()
    return thread


def run(spec: CheckSpec, tree_tar: bytes, *, client: Any = None, reason: str = "") -> CheckResult:
    """Run one check in a fresh container on an exported tree; always remove the container."""
    import docker.errors

    client = client or connect()
    try:
        return _run(client, spec, tree_tar, reason)
    except docker.errors.DockerException as exc:
        raise SandboxError(
            f"the Docker Engine failed running check {spec.name}: {exc}", hint=SETUP_HINT
        ) from exc


def _run(client: Any, spec: CheckSpec, tree_tar: bytes, reason: str) -> CheckResult:
    import requests

    sweep_once(client)
    require_image(client, spec.image)
    started = time.monotonic()
    out, err = OutputCapture(spec.output_limit), OutputCapture(spec.output_limit)
    container = client.containers.create(**container_kwargs(spec, ["/bin/sh", "-c", spec.run]))
    timed_out = False
    try:
        container.put_archive("/", retag(tree_tar, prefix=WORKDIR.strip("/"), owner=SANDBOX_UID))
        stream = container.attach(stdout=True, stderr=True, stream=True, demux=True, logs=False)
        reader = pump(stream, out, err)
        container.start()
        remaining = spec.timeout - (time.monotonic() - started)
        try:
            status = container.wait(timeout=max(remaining, 0.01))
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            if time.monotonic() - started < spec.timeout - 0.5:
                raise  # the engine went away, not the check's time
            timed_out = True
            with contextlib.suppress(Exception):
                container.kill()
            status = container.wait(timeout=30)
        reader.join(timeout=10)
        container.reload()
        state = container.attrs.get("State", {})
        code = int(status.get("StatusCode", state.get("ExitCode", -1)))
        # The kernel's OOM kill is SIGKILL (137); the engine's flag is set when it saw it.
        oom = bool(state.get("OOMKilled")) or (code == 137 and not timed_out)
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
    return CheckResult(
        name=spec.name,
        backend=NAME,
        exit_code=code,
        duration_ms=int((time.monotonic() - started) * 1000),
        timed_out=timed_out,
        oom_killed=oom and not timed_out,
        isolated=True,
        reason=reason,
        **captured(out, err),
    )
