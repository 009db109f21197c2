"""Docker warm pool and the stale-container sweep (real engine)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from nexusd.sandbox import docker_backend
from nexusd.sandbox.pool import WarmPool
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.spec import CheckSpec

pytestmark = pytest.mark.docker


def _ours(client: Any) -> list[Any]:
    return client.containers.list(all=True, filters={"label": "nexusd=1"})


def _when_ready(pool: WarmPool, spec: CheckSpec, tar: bytes) -> CheckResult:
    """Run once the pool has refilled (it refills in the background)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        result = pool.run(spec, tar)
        if result is not None:
            return result
        time.sleep(0.05)
    raise AssertionError("the warm pool did not refill within 60 s")


def test_pool_runs_checks_isolated_and_destroys_each_container(
    docker_client: Any, make_spec: Any, probe_tar: bytes
) -> None:
    pool = WarmPool(make_spec("true"), size=1, client=docker_client)
    pool.start()
    try:
        first = pool.run(make_spec("python3 write.py /workspace/mark; ls"), probe_tar)
        assert first is not None and first.status == "passed"
        assert "WROTE /workspace/mark" in first.stdout and "warm pool" in first.reason
        second = _when_ready(pool, make_spec("ls /workspace"), probe_tar)
        assert "mark" not in second.stdout  # a fresh container, not the previous one's
        timed = _when_ready(pool, make_spec("sleep 31343", timeout=1), probe_tar)
        assert timed.status == "timeout"
    finally:
        pool.stop()
    assert _ours(docker_client) == []


def test_pool_accepts_only_matching_limits(docker_client: Any, make_spec: Any) -> None:
    pool = WarmPool(make_spec("true"), size=1, client=docker_client)
    assert pool.accepts(make_spec("pytest -q"))
    assert not pool.accepts(make_spec("pytest -q", memory_bytes=1024**3))
    assert not pool.accepts(make_spec("pytest -q", network=True))


def test_sweep_removes_containers_of_dead_owners_only(docker_client: Any) -> None:
    labels = docker_backend.labels()
    stale = docker_client.containers.create(
        "nexusd-python:bookworm", ["true"], labels={**labels, "nexusd.pid": "999999999"}
    )
    mine = docker_client.containers.create("nexusd-python:bookworm", ["true"], labels=labels)
    try:
        assert docker_backend.sweep(docker_client) == 1
        ids = {c.id for c in _ours(docker_client)}
        assert stale.id not in ids and mine.id in ids
    finally:
        mine.remove(force=True)


def test_pool_from_config_uses_sandbox_defaults(make_spec: Any) -> None:
    from nexusd.config import config_from_mapping
    from nexusd.sandbox.pool import pool_from_config
    from nexusd.sandbox.spec import check_specs

    assert pool_from_config(config_from_mapping({})) is None
    config = config_from_mapping(
        {"sandbox": {"warm_pool": 2}, "checks": [{"name": "u", "run": "pytest"}]}
    )
    pool = pool_from_config(config)
    assert pool is not None and pool.size == 2
    assert pool.accepts(check_specs(config)[0])
