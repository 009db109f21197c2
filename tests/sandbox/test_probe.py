"""What doctor sees and what `auto` picks, on this machine's real engine and bwrap."""

from __future__ import annotations

from typing import Any

import pytest

from nexusd.config import config_from_mapping
from nexusd.sandbox.probe import SETUP, choose, image_fix, report


@pytest.mark.parametrize("backend", ["bwrap", "subprocess"])
def test_forced_backend_is_used_as_configured(backend: str) -> None:
    choice = choose(config_from_mapping({"sandbox": {"backend": backend}}))
    assert choice.backend == backend and backend in choice.reason


@pytest.mark.docker
def test_report_lists_capabilities_and_the_choice(docker_client: Any) -> None:
    data = report(config_from_mapping({"checks": [{"name": "x", "run": "true", "image": "no:pe"}]}))
    caps = {c["name"]: c for c in data["capabilities"]}
    assert caps["docker engine"]["ok"]
    assert caps["image nexusd-python:bookworm"]["ok"]
    assert not caps["image no:pe"]["ok"] and caps["image no:pe"]["fix"].startswith(
        "docker pull no:pe"
    )
    assert {"bubblewrap", "user namespaces"} <= set(caps)
    # One configured image is missing, so auto does not pick docker, and says why.
    assert data["backend"] in {"bwrap", "subprocess"}
    assert "no:pe" in data["reason"]


@pytest.mark.parametrize(
    ("image", "fix"),
    [
        ("nexusd-python:bookworm", SETUP),  # the setup script builds it
        ("nexusd-project:3f2a9c", "nexusd sandbox build"),
        (
            "rust:1-slim",
            "docker pull rust:1-slim (with no network: docker load -i rust_1-slim.tar)",
        ),
        (
            "ghcr.io/org/img:2",
            "docker pull ghcr.io/org/img:2 (with no network: docker load -i img_2.tar)",
        ),
    ],
)
def test_a_missing_image_gets_the_fix_that_makes_it(image: str, fix: str) -> None:
    assert image_fix(image) == fix
