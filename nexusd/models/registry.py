"""Planner providers: one interface, found by type name through entry points.

Third-party packages add a provider by declaring a factory in the entry-point
group `nexusd.planners`; the factory takes a ProviderSettings and returns an
object with `settings` and `complete(call)`. Our own five are declared there
too, and also known here so a source checkout works before installation.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from nexusd.errors import ConfigError
from nexusd.models.base import (
    Completion,
    Message,
    ModelCall,
    Provider,
    ProviderError,
    ProviderSettings,
    ProviderTimeout,
    label,
)

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "Completion",
    "Message",
    "ModelCall",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ProviderTimeout",
    "create_provider",
    "label",
    "provider_types",
    "settings_from_mapping",
]

ENTRY_POINT_GROUP = "nexusd.planners"

BUILTIN: dict[str, str] = {
    "offline": "nexusd.models.offline:OfflineProvider",
    "openai": "nexusd.models.openai:OpenAIProvider",
    "ollama": "nexusd.models.ollama:OllamaProvider",
    "command": "nexusd.models.command:CommandProvider",
    "llamacpp": "nexusd.models.llamacpp:LlamaCppProvider",
}

Factory = Callable[[ProviderSettings], Provider]


@functools.lru_cache(maxsize=4)
def _installed(search_path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # Reading every installed package's entry points costs ~25 ms, and every answer resolves
    # its routes: read once per `sys.path` (what decides which packages are installed).
    del search_path
    return tuple((ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP))


def provider_types() -> dict[str, str]:
    """Every known provider type -> `module:attr` (built-ins, then installed entry points)."""
    return {**BUILTIN, **dict(_installed(tuple(sys.path)))}


def _factory(type_name: str) -> Factory:
    target = provider_types().get(type_name)
    if target is None:
        known = ", ".join(sorted(provider_types()))
        raise ConfigError(
            f"unknown provider type `{type_name}`",
            hint=f"use one of: {known} (or install a package that adds `{type_name}`)",
        )
    module_name, _, attr = target.partition(":")
    factory: Factory = getattr(importlib.import_module(module_name), attr)
    return factory


def create_provider(
    settings: ProviderSettings, *, offline_answer: Callable[[ModelCall], str] | None = None
) -> Provider:
    """Instantiate the provider for `settings` (the offline one gets `offline_answer`)."""
    if settings.type == "offline":
        from nexusd.models.offline import OfflineProvider

        return OfflineProvider(settings, offline_answer)
    return _factory(settings.type)(settings)


def settings_from_mapping(name: str, raw: Mapping[str, Any] | None) -> ProviderSettings:
    """Normalise one `providers.<name>` entry; a bare type name needs no entry."""
    if raw is None:
        if name not in provider_types():
            raise ConfigError(
                f"provider `{name}` is not defined",
                hint=f"add `providers: {{{name}: {{type: openai, ...}}}}` or use a type name "
                f"({', '.join(sorted(provider_types()))})",
            )
        return ProviderSettings(name=name, type=name)
    command = raw.get("command") or ()
    if isinstance(command, str):
        import shlex

        command = shlex.split(command)
    known = {
        "type",
        "model",
        "base_url",
        "api_key_env",
        "command",
        "args",
        "model_path",
        "timeout_ms",
        "n_ctx",
        "n_threads",
        "chat_format",
        "chat_template",
        "circuit_failures",
        "circuit_reset_ms",
    }
    return ProviderSettings(
        name=name,
        type=str(raw.get("type") or name),
        model=raw.get("model"),
        base_url=raw.get("base_url"),
        api_key_env=raw.get("api_key_env"),
        command=tuple(str(c) for c in command),
        args=tuple(str(a) for a in raw.get("args") or ()),
        model_path=raw.get("model_path"),
        timeout_ms=int(raw.get("timeout_ms") or 60_000),
        n_ctx=int(raw.get("n_ctx") or 4096),
        n_threads=int(raw["n_threads"]) if raw.get("n_threads") else None,
        chat_format=raw.get("chat_format"),
        chat_template=raw.get("chat_template"),
        circuit_failures=int(raw.get("circuit_failures") or 3),
        circuit_reset_ms=int(raw.get("circuit_reset_ms") or 30_000),
        extra={k: v for k, v in raw.items() if k not in known},
    )
