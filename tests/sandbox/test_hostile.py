"""Hostile checks on every backend that claims isolation: each is contained and reported."""

from __future__ import annotations

import functools
import os
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nexusd.sandbox import bwrap_backend, docker_backend, subprocess_backend
from nexusd.sandbox.pool import WarmPool
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.spec import CheckSpec
from tests.conftest import git
from tests.sandbox.conftest import host_processes

Runner = Callable[[CheckSpec, bytes], CheckResult]


def _warm(client: Any, spec: CheckSpec, tar: bytes) -> CheckResult:
    """Run through a warm pool made for this spec's limits (started and stopped here)."""
    pool = WarmPool(spec, size=1, client=client)
    pool.start()
    try:
        result = pool.run(spec, tar)
    finally:
        pool.stop()
    assert result is not None
    return result


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("docker-warm-pool", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ]
)
def isolated(request: pytest.FixtureRequest) -> Runner:
    """Run a spec on one isolating backend."""
    if request.param == "docker":
        client = request.getfixturevalue("docker_client")
        return functools.partial(docker_backend.run, client=client)
    if request.param == "docker-warm-pool":
        return functools.partial(_warm, request.getfixturevalue("docker_client"))
    request.getfixturevalue("bwrap_usable")
    return bwrap_backend.run


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("docker-warm-pool", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
        "subprocess",
    ]
)
def any_backend(request: pytest.FixtureRequest) -> Runner:
    """Run a spec on each backend, the unisolated one included."""
    if request.param == "docker":
        client = request.getfixturevalue("docker_client")
        return functools.partial(docker_backend.run, client=client)
    if request.param == "docker-warm-pool":
        return functools.partial(_warm, request.getfixturevalue("docker_client"))
    if request.param == "bwrap":
        request.getfixturevalue("bwrap_usable")
        return bwrap_backend.run
    return subprocess_backend.run


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on the host's loopback (the kernel completes connects from its backlog)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


def test_network_is_unreachable(isolated: Runner, make_spec, probe_tar, listener) -> None:
    targets = f"127.0.0.1:{listener} 1.1.1.1:53 10.0.0.1:80"
    result = isolated(make_spec(f"python3 net.py {targets}"), probe_tar)
    assert result.status == "passed", result.stderr
    assert "CONNECTED" not in result.stdout
    assert result.stdout.count("BLOCKED") == 3
    assert result.isolated


def test_subprocess_backend_does_reach_the_network(make_spec, probe_tar, listener) -> None:
    # The documented limitation: the host listener is reachable without isolation.
    result = subprocess_backend.run(make_spec(f"python3 net.py 127.0.0.1:{listener}"), probe_tar)
    assert f"CONNECTED 127.0.0.1:{listener}" in result.stdout
    assert not result.isolated
    assert any("NOT ISOLATED" in w for w in result.warnings)


def test_writes_outside_the_workspace_are_blocked(
    isolated: Runner, make_spec, probe_tar, repo: Path
) -> None:
    home = Path.home()
    before = git(repo, "status", "--porcelain", "--ignored")
    targets = [
        "/etc/nexusd-pwned",
        f"{home}/nexusd-pwned",
        f"{repo}/nexusd-pwned",
        "/usr/nexusd-pwned",
        "/workspace/../nexusd-pwned",
    ]
    result = isolated(make_spec("python3 write.py " + " ".join(targets)), probe_tar)
    assert result.status == "passed", result.stderr
    assert "WROTE" not in result.stdout, result.stdout
    assert result.stdout.count("BLOCKED") == len(targets)
    for target in targets[:4]:
        assert not Path(target).exists(), target
    assert git(repo, "status", "--porcelain", "--ignored") == before


def test_workspace_itself_is_writable(isolated: Runner, make_spec, probe_tar) -> None:
    result = isolated(make_spec("python3 write.py /workspace/out.txt /tmp/scratch"), probe_tar)
    assert result.stdout.count("WROTE") == 2, result.stdout + result.stderr


def test_fork_bomb_is_bounded_and_its_children_killed(
    isolated: Runner, make_spec, probe_tar
) -> None:
    result = isolated(make_spec("python3 forkbomb.py", pids=24, timeout=30), probe_tar)
    assert "REFUSED after" in result.stdout, result.stdout + result.stderr
    forked = int(result.stdout.split("REFUSED after")[1].split()[0])
    assert forked < 24
    assert host_processes("forkbomb.py") == []


def test_allocating_2gb_is_reported_as_out_of_memory(
    isolated: Runner, make_spec, probe_tar
) -> None:
    result = isolated(make_spec("python3 hog.py"), probe_tar)
    assert "ALLOCATED" not in result.stdout
    assert result.oom_killed
    assert result.status == "failed"
    assert not result.timed_out


def test_sleep_forever_is_killed_at_the_timeout(any_backend: Runner, make_spec, probe_tar) -> None:
    run = any_backend
    result = run(make_spec("echo before; sleep 31339; echo after", timeout=1.5), probe_tar)
    assert result.timed_out
    assert result.status == "timeout"
    assert "before" in result.stdout and "after" not in result.stdout
    assert host_processes("31339") == []


def test_printing_100mb_is_truncated(any_backend: Runner, make_spec, probe_tar) -> None:
    run = any_backend
    result = run(make_spec("python3 flood.py", output_limit=4096), probe_tar)
    assert result.status == "passed", result.stderr
    assert result.stdout_truncated
    assert result.stdout_bytes == 100_000_000
    assert len(result.stdout_head) + len(result.stdout_tail) <= 4096
    assert set(result.stdout_head) == {"y"} and set(result.stdout_tail) == {"y"}


def test_background_processes_are_killed(any_backend: Runner, make_spec, probe_tar) -> None:
    run = any_backend
    spec = make_spec("sleep 31340 & (sleep 31341 &) ; echo spawned", timeout=10)
    result = run(spec, probe_tar)
    assert result.status == "passed"
    assert "spawned" in result.stdout
    assert host_processes("sleep 3134") == []


def test_subprocess_cannot_contain_a_new_session(make_spec, probe_tar) -> None:
    # Documented: a process that leaves the group (setsid) survives the subprocess backend.
    spec = make_spec("setsid sleep 31342 >/dev/null 2>&1 & sleep 0.5; echo ok", timeout=10)
    result = subprocess_backend.run(spec, probe_tar)
    try:
        assert result.status == "passed"
        assert host_processes("sleep 31342"), "expected the escaped process (a known limit)"
    finally:
        for line in host_processes("sleep 31342"):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
