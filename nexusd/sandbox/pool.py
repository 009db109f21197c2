"""A warm pool of pre-started Docker containers, to cut a check's start-up cost.

Each pooled container is created with the default sandbox limits and runs
`sleep infinity` as uid 65534; a check takes one, receives the tree with
`put_archive`, runs as an exec, and the container is destroyed afterwards (never
reused), so every run is still isolated from the previous one. A background
thread refills the pool and removes used containers. Only checks whose image,
limits and network match the pool's use it; others take the cold path.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from nexusd.config import Config
from nexusd.sandbox import docker_backend
from nexusd.sandbox.result import CheckResult, OutputCapture, captured
from nexusd.sandbox.spec import WORKDIR, CheckSpec, memory_limit
from nexusd.sandbox.workspace import SANDBOX_UID, retag

# After the exec's process exits, how long to wait for its output to drain.
_DRAIN_SECONDS = 0.5
# Unpack the tree from stdin into the (pre-created, empty) workspace, then run the check.
_UNPACK_AND_RUN = 'tar -x -f - -C /workspace && exec /bin/sh -c "$1"'


def _demux(
    frames: Iterator[tuple[int, bytes]],
) -> Iterator[tuple[bytes | None, bytes | None]]:
    for stream, data in frames:
        yield (data, None) if stream == 1 else (None, data)


def _workspace_tar() -> bytes:
    """A tar holding only an empty `workspace/` owned by the sandbox user."""
    return retag(_EMPTY_TAR, prefix=WORKDIR.strip("/"), owner=SANDBOX_UID)


_EMPTY_TAR = bytes(10240)


def pool_key(spec: CheckSpec) -> tuple[object, ...]:
    """What a pooled container fixes at creation: a check must match it to use the pool."""
    return (spec.image, spec.memory_bytes, spec.cpus, spec.pids, spec.network)


class WarmPool:
    """Keeps `size` started containers ready for checks shaped like `template`."""

    name = "warm-pool"  # a daemon service: start(), stop(), and the name it is logged by

    def __init__(self, template: CheckSpec, size: int, client: Any = None) -> None:
        self.template = template
        self.size = size
        self._client = client
        self._ready: queue.Queue[Any] = queue.Queue()
        self._trash: queue.Queue[Any] = queue.Queue()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def client(self) -> Any:
        """The docker client (connected on first use)."""
        if self._client is None:
            self._client = docker_backend.connect()
        return self._client

    def start(self, wait: bool = True) -> None:
        """Start the refill thread; with `wait`, return once the pool is full."""
        docker_backend.sweep_once(self.client)
        docker_backend.require_image(self.client, self.template.image)
        self._thread = threading.Thread(target=self._loop, name="nexusd-warm-pool", daemon=True)
        self._thread.start()
        if wait:
            self.wait_idle()

    def stop(self) -> None:
        """Stop refilling and remove every container the pool holds."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None
        for q in (self._ready, self._trash):
            while not q.empty():
                self._remove(q.get_nowait())

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until the pool is full and used containers are gone (for fair benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ready.qsize() >= self.size and self._trash.empty():
                return True
            time.sleep(0.02)
        return False

    def accepts(self, spec: CheckSpec) -> bool:
        """Whether a check can run in one of this pool's containers."""
        return pool_key(spec) == pool_key(self.template)

    def run(self, spec: CheckSpec, tree_tar: bytes, *, reason: str = "") -> CheckResult | None:
        """Run a check in a warm container; None when the pool is empty (caller goes cold)."""
        try:
            container = self._ready.get_nowait()
        except queue.Empty:
            return None
        try:
            return self._exec(container, spec, tree_tar, reason)
        finally:
            self._trash.put(container)
            self._wake.set()

    def _exec(self, container: Any, spec: CheckSpec, tree_tar: bytes, reason: str) -> CheckResult:
        import socket

        from docker.utils.socket import frames_iter

        api = self.client.api
        started = time.monotonic()
        out, err = OutputCapture(spec.output_limit), OutputCapture(spec.output_limit)
        # The tree goes in through the exec's stdin (`tar -x`): put_archive costs ~50 ms.
        exec_id = api.exec_create(
            container.id,
            ["/bin/sh", "-c", _UNPACK_AND_RUN, "nexusd-check", spec.run],
            stdin=True,
            user=f"{SANDBOX_UID}:{SANDBOX_UID}",
            workdir=WORKDIR,
            environment=docker_backend.environment(spec),
        )["Id"]
        sock = api.exec_start(exec_id, socket=True)
        raw = getattr(sock, "_sock", sock)
        try:
            raw.sendall(tree_tar)
            raw.shutdown(socket.SHUT_WR)
            reader = docker_backend.pump(_demux(frames_iter(sock, tty=False)), out, err)
            timed_out = self._wait(api, exec_id, reader, started + spec.timeout)
            if reader.is_alive():
                with contextlib.suppress(Exception):
                    container.kill()
                reader.join(timeout=10)
        finally:
            with contextlib.suppress(Exception):
                sock.close()
        code = api.exec_inspect(exec_id).get("ExitCode")
        code = 137 if timed_out or code is None else int(code)
        return CheckResult(
            name=spec.name,
            backend=docker_backend.NAME,
            exit_code=code,
            duration_ms=int((time.monotonic() - started) * 1000),
            timed_out=timed_out,
            oom_killed=code == 137 and not timed_out,
            isolated=True,
            reason=(reason + "; " if reason else "") + "warm pool",
            **captured(out, err),
        )

    @staticmethod
    def _wait(api: Any, exec_id: str, reader: threading.Thread, deadline: float) -> bool:
        """Wait for the exec's output to end; True when the deadline passed first."""
        exited_at: float | None = None
        while reader.is_alive():
            reader.join(timeout=0.05)
            now = time.monotonic()
            if now >= deadline:
                return True
            if exited_at is None and not api.exec_inspect(exec_id)["Running"]:
                exited_at = now
            if exited_at is not None and now - exited_at > _DRAIN_SECONDS:
                break  # background processes hold the output open; they die with the container
        return False

    def _loop(self) -> None:
        while not self._stopping.is_set():
            while not self._trash.empty():
                self._remove(self._trash.get_nowait())
            if self._ready.qsize() < self.size:
                with contextlib.suppress(Exception):
                    kwargs = docker_backend.container_kwargs(self.template, ["sleep", "infinity"])
                    container = self.client.containers.create(**kwargs)
                    container.put_archive("/", _workspace_tar())
                    container.start()
                    self._ready.put(container)
                continue
            self._wake.wait(timeout=1.0)
            self._wake.clear()

    @staticmethod
    def _remove(container: Any) -> None:
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)


def pool_from_config(config: Config) -> WarmPool | None:
    """A (not yet started) pool for `sandbox.warm_pool` > 0, shaped by the sandbox defaults."""
    size = config.sandbox.warm_pool
    if size <= 0:
        return None
    sandbox = config.sandbox
    template = CheckSpec(
        name="warm-pool",
        run="true",
        image=sandbox.image,
        timeout=float(sandbox.timeout),
        memory_bytes=memory_limit(sandbox.memory, "sandbox.memory"),
        cpus=float(sandbox.cpus),
        pids=int(sandbox.pids),
        output_limit=int(sandbox.output_limit_bytes),
    )
    return WarmPool(template, size)
