"""The typed sections and the defaults hold the same keys, and each value keeps its type."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest

from nexusd.config import DEFAULTS, config_from_mapping
from nexusd.config import sections as S
from nexusd.errors import ConfigError


def _leaves(cls: type[S.Section], prefix: str = "") -> dict[str, Any]:
    """Dotted key -> annotated type, for every field that is not itself a section."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for name in S.fields(cls):
        kind = hints[name]
        if isinstance(kind, type) and issubclass(kind, S.Section):
            out.update(_leaves(kind, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = kind
    return out


def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and dotted not in (
            "providers",
            "api.roles",
            "api.categories",
            "api.actions",
        ):
            out.update(_flat(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def test_every_default_has_exactly_one_typed_field() -> None:
    assert set(_leaves(S.Settings)) == set(_flat(DEFAULTS))


def _accepts(kind: Any, value: Any) -> bool:
    origin = typing.get_origin(kind)
    if origin in (types.UnionType, typing.Union):
        return any(_accepts(arg, value) for arg in typing.get_args(kind))
    if kind is type(None):
        return value is None
    if origin is typing.Literal:
        return value in typing.get_args(kind)
    if origin is tuple:
        return isinstance(value, list | tuple)
    if origin is not None:  # Mapping[...]
        return isinstance(value, Mapping)
    if kind is float:
        return isinstance(value, float)
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


@pytest.mark.parametrize("key", sorted(_flat(DEFAULTS)))
def test_each_default_has_its_fields_type(key: str) -> None:
    kind = _leaves(S.Settings)[key]
    assert _accepts(kind, _flat(DEFAULTS)[key]), (key, kind)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("sandbox.backend", "vm", "one of auto, bwrap, docker, subprocess"),
        ("memory.search.fusion", "max", "one of rrf, score"),
        ("routing.critic.format", "xml", "one of json, text"),
        ("daemon.log_level", "loud", "one of debug, error, info, warning"),
        ("planner.catalog", 3, "a non-empty string"),
        ("memory.search.recency_half_life_days", "soon", "a number"),
    ],
)
def test_the_annotations_are_the_rules(key: str, value: object, message: str) -> None:
    # Literal[...] gives a key its choices and `X | None` the type of a set value.
    *parents, leaf = key.split(".")
    layer: dict[str, Any] = {leaf: value}
    for part in reversed(parents):
        layer = {part: layer}
    with pytest.raises(ConfigError) as info:
        config_from_mapping(layer)
    assert key in info.value.message and message in info.value.message


@pytest.mark.parametrize("key", ["planner.catalog", "routing.builder.model", "api.mcp_role"])
def test_a_nullable_key_takes_null_back(key: str) -> None:
    *parents, leaf = key.split(".")
    layer: dict[str, Any] = {leaf: None}
    for part in reversed(parents):
        layer = {part: layer}
    assert config_from_mapping(layer).get(key) is None


def test_a_loaded_value_reads_back_typed() -> None:
    config = config_from_mapping(
        {
            "watch": {"paths": ["requests"], "debounce_ms": 80},
            "memory": {"search": {"recency_half_life_days": 7}},
            "routing": {"critic": {"provider": "local"}},
            "providers": {"local": {"type": "openai", "base_url": "http://127.0.0.1:9"}},
        }
    )
    assert config.watch.paths == ("requests",) and config.watch.debounce_ms == 80
    assert config.memory.search.recency_half_life_days == 7.0
    assert config.routing.role("critic").provider == "local"
    assert config.routing.architect.provider is None
    assert config.providers["local"]["base_url"] == "http://127.0.0.1:9"
    assert config.checkpoint.retention.keep_last == DEFAULTS["checkpoint"]["retention"]["keep_last"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.watch.debounce_ms = 1
    assert (
        config.watch
        == config_from_mapping({"watch": {"paths": ["requests"], "debounce_ms": 80}}).watch
    )
    assert "debounce_ms=80" in repr(config.watch)
