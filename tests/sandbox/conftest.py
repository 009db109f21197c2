"""Sandbox fixtures: real backends, skipped only with a reason outside CI (failed in CI)."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nexusd.errors import SandboxError
from nexusd.sandbox.spec import CheckSpec

IMAGE = "nexusd-python:bookworm"
PROBES = Path(__file__).parent / "probes"


def unavailable(reason: str) -> None:
    """Skip with the reason on a developer machine; fail in CI, where it must run."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: run scripts/setup-sandbox.sh first)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    """A connected docker client with the test image, or skip/fail with the reason."""
    from nexusd.sandbox import docker_backend

    try:
        client = docker_backend.connect(timeout=3)
        docker_backend.require_image(client, IMAGE)
    except SandboxError as exc:
        unavailable(f"docker not usable: {exc.message}")
    yield client
    client.close()


@pytest.fixture
def make_spec() -> Callable[..., CheckSpec]:
    """Factory: a CheckSpec with small limits, overridable by keyword."""

    def make(run: str, **kw: Any) -> CheckSpec:
        values: dict[str, Any] = {
            "name": "probe",
            "run": run,
            "image": IMAGE,
            "timeout": 20.0,
            "memory_bytes": 128 * 1024**2,
            "cpus": 1.0,
            "pids": 32,
            "output_limit": 4096,
        }
        values.update(kw)
        return CheckSpec(**values)

    return make


@pytest.fixture
def probe_tar() -> bytes:
    """The probe scripts in tests/sandbox/probes as a tree tar (what git archive yields)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for path in sorted(PROBES.iterdir()):
            tar.add(path, arcname=path.name)
    return out.getvalue()


def host_processes(marker: str) -> list[str]:
    """Command lines of host processes containing `marker` (containers' included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and "pytest" not in cmd:
            found.append(f"{entry.name}: {cmd}")
    return found


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
        "subprocess",
    ]
)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend name, with its availability fixture."""
    if request.param == "docker":
        request.getfixturevalue("docker_client")
    if request.param == "bwrap":
        request.getfixturevalue("bwrap_usable")
    return str(request.param)
