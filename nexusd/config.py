"""One configuration loader: defaults < user file < repository file, validated once.

Every key has a default here; unknown keys are errors that name the key and the
file. `Config.sources` says where each effective value came from, for
`nexusd config show`.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nexusd.errors import ConfigError

DEFAULTS: dict[str, Any] = {
    "version": 1,
    "watch": {
        "paths": [".scratchpad_logs", ".scratchpad"],
        "debounce_ms": 50,
        # After a writer closed the file (or renamed it into place): the wait is this short.
        "settle_ms": 5,
        # A file modified but not yet closed is treated as complete after this much silence.
        "write_grace_ms": 2000,
        "rescan_seconds": 30,
        "max_request_bytes": 1_048_576,
        "queue_size": 1000,
    },
    "planner": {
        "provider": "offline",
        "catalog": None,
        "max_actions": 8,
        # LLM providers (issue 6): retries per model call, the call's time box, prompt budget.
        "max_retries": 2,
        "timeout_ms": 120_000,
        "max_context_tokens": 6000,
    },
    # Per-role model routing; a role whose provider is null uses planner.provider.
    "routing": {
        role: {
            "provider": None,
            "model": None,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "format": fmt,
        }
        for role, temperature, max_tokens, fmt in (
            ("librarian", 0.1, 256, "json"),
            ("architect", 0.2, 2048, "json"),
            ("builder", 0.2, 2048, "text"),
            ("critic", 0.1, 512, "text"),
        )
    },
    # Named provider settings (free-form names; see PROVIDER_KEYS).
    "providers": {},
    "checks": [],
    "sandbox": {
        "backend": "auto",
        "image": "nexusd-python:bookworm",
        "timeout": 60,
        "memory": "256m",
        "cpus": 1.0,
        "pids": 128,
        "output_limit_bytes": 65_536,
        "warm_pool": 0,
        "ro_binds": [],
    },
    "memory": {
        "enabled": True,
        "index_uri": None,
        "model": "all-MiniLM-L6-v2",
        "sources": ["MEMORY.md", "memory/daily/*.md"],
        "extra_globs": [],
        "max_file_bytes": 2_097_152,
        "chunk_max_chars": 1500,
        "optimize_minutes": 10,
        "search": {
            "mode": "hybrid",
            "k": 8,
            "fusion": "score",
            "rrf_k": 60,
            "depth": 100,
            "vector_weight": 0.75,
            "keyword_weight": 0.25,
            "vector_norm": "none",
            "keyword_norm": "max",
            "floor_missing": True,
            "recency_half_life_days": None,
        },
    },
    "code": {
        "enabled": True,
        # Globs (fnmatch, `*` crosses folders) of tracked files the code index skips, on top
        # of nexusd's own list of vendored and generated files (node_modules, *.min.js, …).
        "exclude": [],
        "default_excludes": True,
        "max_file_bytes": 1_048_576,
        "max_files": 200_000,
        # Ranked files a response lists (`relevant_files`) and its `## Relevant Code` shows.
        "max_results": 10,
        # Parser processes for a large (re)build; 0 = one per core.
        "workers": 0,
    },
    "checkpoint": {
        "on_request": True,
        "on_commit": True,
        "max_untracked_file_bytes": 52_428_800,
        "retention": {
            "keep_last": 50,
            "keep_days": 14,
            "daily_beyond": True,
            "keep_passed": True,
            "keep_named": True,
        },
    },
    "daemon": {
        "log_level": "info",
    },
}

# Keys whose default is None: the type a set value must have.
NULLABLE: dict[str, type] = {
    "planner.catalog": str,
    "memory.index_uri": str,
    "memory.search.recency_half_life_days": float,
    **{
        f"routing.{role}.{key}": str
        for role in ("librarian", "architect", "builder", "critic")
        for key in ("provider", "model")
    },
}

CHOICES: dict[str, frozenset[str]] = {
    "sandbox.backend": frozenset({"auto", "docker", "bwrap", "subprocess"}),
    "memory.search.mode": frozenset({"hybrid", "vector", "keyword"}),
    "memory.search.fusion": frozenset({"score", "rrf"}),
    "memory.search.vector_norm": frozenset({"none", "max", "minmax", "zscore"}),
    "memory.search.keyword_norm": frozenset({"none", "max", "minmax", "zscore"}),
    "daemon.log_level": frozenset({"debug", "info", "warning", "error"}),
    **{
        f"routing.{role}.format": frozenset({"json", "text"})
        for role in ("librarian", "architect", "builder", "critic")
    },
}

# One entry of `providers:` (issue 6); `type` is required.
PROVIDER_KEYS: dict[str, type | tuple[type, ...]] = {
    "type": str,
    "model": str,
    "base_url": str,
    "api_key_env": str,
    "command": (str, list),
    "args": list,
    "model_path": str,
    "timeout_ms": int,
    "n_ctx": int,
    "n_threads": int,
    "circuit_failures": int,
    "circuit_reset_ms": int,
}

CHECK_WHEN = frozenset({"request", "commit", "manual"})

# One entry of `checks:`; None means "inherit from sandbox.*".
CHECK_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "run": str,
    "image": str,
    "timeout": (int, float),
    "memory": str,
    "cpus": (int, float),
    "pids": int,
    "network": bool,
    "when": (str, list),
    "env": list,
}
CHECK_REQUIRED = ("name", "run")


@dataclass(frozen=True)
class Config:
    """The merged, validated configuration and where each value came from."""

    data: Mapping[str, Any]
    sources: Mapping[str, str] = field(default_factory=dict)

    def get(self, dotted: str) -> Any:
        """Value of a dotted key such as `watch.debounce_ms`."""
        node: Any = self.data
        for part in dotted.split("."):
            node = node[part]
        return node

    def source(self, dotted: str) -> str:
        """Where the value of a dotted key came from: `default` or a file path."""
        return self.sources.get(dotted, "default")


def user_config_path() -> Path:
    """The per-user file: `$XDG_CONFIG_HOME/nexusd/config.yaml` (default `~/.config`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "nexusd" / "config.yaml"


def load_config(root: Path | None = None, *, user_file: Path | None = None) -> Config:
    """Load defaults, then the user file, then `<root>/.nexus/config.yaml`; validate each."""
    data = copy.deepcopy(DEFAULTS)
    sources: dict[str, str] = {}
    layers = [user_file if user_file is not None else user_config_path()]
    if root is not None:
        layers.append(root / ".nexus" / "config.yaml")
    for path in layers:
        layer = _read_layer(path)
        if layer is not None:
            _merge(data, layer, "", str(path), sources)
    return Config(data=data, sources=sources)


def config_from_mapping(layer: Mapping[str, Any], origin: str = "<mapping>") -> Config:
    """Validate a mapping over the defaults (for tests and programmatic use)."""
    data = copy.deepcopy(DEFAULTS)
    sources: dict[str, str] = {}
    _merge(data, dict(layer), "", origin, sources)
    return Config(data=data, sources=sources)


def _read_layer(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: not valid YAML ({exc})", hint="fix the syntax, or delete the file"
        ) from exc
    if loaded is None:
        return None
    if not isinstance(loaded, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of keys, not {type(loaded).__name__}",
            hint="start the file with keys such as `watch:` or `checks:`",
        )
    return loaded


def _merge(
    base: dict[str, Any], layer: dict[str, Any], prefix: str, origin: str, sources: dict[str, str]
) -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if not isinstance(key, str) or key not in base:
            known = ", ".join(sorted(base))
            raise ConfigError(
                f"{origin}: unknown key `{dotted}`",
                hint=f"remove it or use one of: {known}",
            )
        default = base[key]
        if dotted == "providers":
            base[key] = _validate_providers(value, origin, default)
            sources[dotted] = origin
            continue
        if isinstance(default, dict):
            if value is None:
                # `watch:` with every key below it commented out: nothing is set.
                continue
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{origin}: `{dotted}` must be a mapping, got {type(value).__name__}",
                    hint=f"write `{key}:` followed by indented keys",
                )
            _merge(default, value, f"{dotted}.", origin, sources)
            continue
        base[key] = _validate(dotted, default, value, origin)
        sources[dotted] = origin


def _type_error(origin: str, dotted: str, want: str, value: Any) -> ConfigError:
    return ConfigError(
        f"{origin}: `{dotted}` must be {want}, got {value!r}",
        hint=f"set `{dotted}` to {want}",
    )


def _validate(dotted: str, default: Any, value: Any, origin: str) -> Any:
    if dotted == "checks":
        return _validate_checks(value, origin)
    if value is None and (default is None or dotted in NULLABLE):
        return None
    want: type = NULLABLE.get(dotted) or type(default)
    if want is bool:
        if not isinstance(value, bool):
            raise _type_error(origin, dotted, "true or false", value)
    elif want is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _type_error(origin, dotted, "a whole number ≥ 0", value)
    elif want is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise _type_error(origin, dotted, "a number ≥ 0", value)
        value = float(value)
    elif want is str:
        if not isinstance(value, str) or not value.strip():
            raise _type_error(origin, dotted, "a non-empty string", value)
    elif want is list and (
        not isinstance(value, list) or not all(isinstance(v, str) for v in value)
    ):
        raise _type_error(origin, dotted, "a list of strings", value)
    choices = CHOICES.get(dotted)
    if choices is not None and value not in choices:
        raise _type_error(origin, dotted, "one of " + ", ".join(sorted(choices)), value)
    return value


def _validate_checks(value: Any, origin: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _type_error(origin, "checks", "a list of checks (`- name: …`)", value)
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        where = f"checks[{i}]"
        if not isinstance(item, dict):
            raise _type_error(origin, where, "a mapping with `name` and `run`", item)
        for key, val in item.items():
            if key not in CHECK_KEYS:
                raise ConfigError(
                    f"{origin}: unknown key `{where}.{key}`",
                    hint="check keys are: " + ", ".join(CHECK_KEYS),
                )
            kind = CHECK_KEYS[key]
            if isinstance(val, bool) and kind is not bool:
                raise _type_error(origin, f"{where}.{key}", "not a boolean", val)
            if not isinstance(val, kind):
                raise _type_error(origin, f"{where}.{key}", f"of type {kind}", val)
        for key in CHECK_REQUIRED:
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise ConfigError(
                    f"{origin}: `{where}.{key}` is missing",
                    hint=f"give every check a `{key}`",
                )
        when = item.get("when", ["request"])
        when = [when] if isinstance(when, str) else when
        bad = [w for w in when if w not in CHECK_WHEN]
        if bad:
            raise _type_error(origin, f"{where}.when", "request, commit or manual", bad)
        if item["name"] in seen:
            raise ConfigError(
                f"{origin}: two checks are named `{item['name']}`", hint="give each a unique name"
            )
        seen.add(item["name"])
        env = item.get("env", [])
        if not all(isinstance(e, str) for e in env):
            raise _type_error(origin, f"{where}.env", "a list of variable names", env)
        out.append({**item, "when": when, "env": env})
    return out


def _validate_providers(value: Any, origin: str, current: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _type_error(origin, "providers", "a mapping of name -> {type: …}", value)
    out = dict(current)
    for name, item in value.items():
        where = f"providers.{name}"
        if not isinstance(item, dict):
            raise _type_error(origin, where, "a mapping with `type`", item)
        for key, val in item.items():
            kind = PROVIDER_KEYS.get(key)
            if kind is None:
                raise ConfigError(
                    f"{origin}: unknown key `{where}.{key}`",
                    hint="provider keys are: " + ", ".join(PROVIDER_KEYS),
                )
            bad_int = kind is int and (isinstance(val, bool) or not isinstance(val, int) or val < 1)
            if bad_int or not isinstance(val, kind) or isinstance(val, bool):
                want = {"int": "a whole number ≥ 1", "str": "a string", "list": "a list of strings"}
                wanted = want.get(getattr(kind, "__name__", ""), "a string or a list of strings")
                raise _type_error(origin, f"{where}.{key}", wanted, val)
            if isinstance(val, list) and not all(isinstance(v, str) for v in val):
                raise _type_error(origin, f"{where}.{key}", "a list of strings", val)
        if not isinstance(item.get("type"), str) or not item["type"].strip():
            raise ConfigError(
                f"{origin}: `{where}.type` is missing",
                hint="set it to offline, openai, ollama, command or llamacpp",
            )
        out[name] = dict(item)
    return out
