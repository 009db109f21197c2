"""Check specs: sizes, inheritance from sandbox.*, selection by name and `when`."""

from __future__ import annotations

import pytest

from nexusd.config import config_from_mapping
from nexusd.errors import ConfigError
from nexusd.sandbox.spec import check_specs, memory_limit, parse_memory


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("256m", 256 * 1024**2),
        ("1g", 1024**3),
        ("512MiB", 512 * 1024**2),
        ("1048576", 1048576),
        ("1.5k", 1536),
        ("64MB", 64 * 1024**2),
    ],
)
def test_parse_memory(text: str, expected: int) -> None:
    assert parse_memory(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "12q", "-1m"])
def test_parse_memory_rejects_nonsense_naming_the_key(text: str) -> None:
    with pytest.raises(ConfigError, match=r"checks\[0\]\.memory"):
        parse_memory(text, "checks[0].memory")


CONFIG = {
    "sandbox": {"timeout": 30, "memory": "128m", "pids": 64},
    "checks": [
        {"name": "unit", "run": "pytest -q", "when": ["request", "commit"]},
        {"name": "lint", "run": "ruff check .", "timeout": 5, "memory": "1g", "env": ["CI"]},
        {"name": "slow", "run": "make e2e", "when": "manual", "network": True, "image": "x:y"},
    ],
}


def test_specs_inherit_sandbox_defaults_and_override_per_check() -> None:
    unit, lint, slow = check_specs(config_from_mapping(CONFIG))
    assert (unit.timeout, unit.memory_bytes, unit.pids, unit.image) == (
        30.0,
        128 * 1024**2,
        64,
        "nexusd-python:bookworm",
    )
    assert (lint.timeout, lint.memory_bytes, lint.env) == (5.0, 1024**3, ("CI",))
    assert (slow.network, slow.image, slow.when) == (True, "x:y", ("manual",))
    assert not unit.network


@pytest.mark.parametrize(
    ("names", "when", "expected"),
    [
        ((), None, ["unit", "lint", "slow"]),
        ((), "request", ["unit", "lint"]),
        ((), "commit", ["unit"]),
        ((), "manual", ["slow"]),
        (("lint", "slow"), None, ["lint", "slow"]),
    ],
)
def test_selection(names: tuple[str, ...], when: str | None, expected: list[str]) -> None:
    specs = check_specs(config_from_mapping(CONFIG), names, when)
    assert [s.name for s in specs] == expected


def test_unknown_check_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="no check named nope") as info:
        check_specs(config_from_mapping(CONFIG), ["nope"])
    assert "lint" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("check", "sandbox", "key"),
    [
        ({"timeout": -1}, {}, "checks[0].timeout"),
        ({"timeout": 0}, {}, "checks[0].timeout"),
        ({"timeout": float("nan")}, {}, "checks[0].timeout"),
        ({"timeout": float("inf")}, {}, "checks[0].timeout"),
        ({"pids": 0}, {}, "checks[0].pids"),
        ({"cpus": -2}, {}, "checks[0].cpus"),
        ({"memory": "0"}, {}, "checks[0].memory"),
        ({"memory": "512"}, {}, "checks[0].memory"),
        ({}, {"timeout": 0}, "sandbox.timeout"),
        ({}, {"pids": 0}, "sandbox.pids"),
    ],
)
def test_limits_that_no_check_can_run_under_name_their_key(
    check: dict[str, object], sandbox: dict[str, object], key: str
) -> None:
    # They used to run anyway: a timeout of 0 "timed out" at once, pids 0 failed inside
    # bwrap, memory 0 died of SIGSEGV, and an infinite timeout crashed with a traceback.
    # Loading refuses some already (nan, inf: config/ranges.py), the specs the rest.
    with pytest.raises(ConfigError) as info:
        config = config_from_mapping(
            {"sandbox": sandbox, "checks": [{"name": "unit", "run": "true", **check}]}
        )
        check_specs(config)
    assert f"`{key}`" in info.value.message
    assert key in (info.value.hint or "")


def test_a_memory_limit_no_check_can_start_in_is_refused_wherever_a_spec_is_made() -> None:
    from nexusd.sandbox.pool import pool_from_config

    # The warm pool's template is shaped by sandbox.memory as every check's default is.
    config = config_from_mapping({"sandbox": {"memory": "512", "warm_pool": 1}}, "test")
    with pytest.raises(ConfigError, match=r"`sandbox\.memory` is 512 bytes, too little"):
        pool_from_config(config)
    assert memory_limit("4m", "sandbox.memory") == 4 * 1024**2
