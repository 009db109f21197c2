"""The configuration's sections as typed, frozen values: `config.watch.debounce_ms` is an int.

The defaults live in `defaults.DEFAULTS` and validation in `load`; these classes give the validated
data the types mypy checks at every use. `tests/config/test_sections.py` holds the two in
step: every key has exactly one field, and every default has its field's type.

Plain classes, not dataclasses: a section's fields are its annotations, read by one shared
`__init__`. Fourteen generated dataclasses cost ~12 ms of imports, which every `nexusd`
command and git hook that reads its configuration would pay.
"""

from __future__ import annotations

import functools
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import FrozenInstanceError
from typing import Any, Literal, TypeVar, cast

T = TypeVar("T", bound="Section")
Norm = Literal["none", "max", "minmax", "zscore"]
# Entries validated key by key but normalised by their users (sandbox/spec, models/registry).
_AS_GIVEN = frozenset({"providers", "checks"})


class Section:
    """A frozen value whose fields are its class's annotations, set once by keyword."""

    def __init__(self, **values: Any) -> None:
        for name in fields(type(self)):
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(
            f"cannot assign to field {name!r}: the configuration is read-only"
        )

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(tuple(sorted(vars(self))))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({inner})"


def fields(cls: type[Section]) -> tuple[str, ...]:
    """The field names of a section, in the order they are declared."""
    return tuple(cls.__annotations__)


class Watch(Section):
    """The watched folders and how long a request's writer is given."""

    paths: tuple[str, ...]
    debounce_ms: int
    settle_ms: int
    write_grace_ms: int
    rescan_seconds: int
    max_request_bytes: int
    queue_size: int


class Planner(Section):
    """The plan: its provider, catalog, size, and the whole answer's time box."""

    provider: str
    catalog: str | None
    max_actions: int
    max_retries: int
    timeout_ms: int
    max_context_tokens: int


class Route(Section):
    """Which provider and model one role uses (None: `planner.provider`)."""

    provider: str | None
    model: str | None
    temperature: float
    max_tokens: int
    format: Literal["json", "text"]


class Routing(Section):
    """A route per role."""

    librarian: Route
    architect: Route
    builder: Route
    critic: Route

    def role(self, name: str) -> Route:
        """The route of the role called `name`."""
        return cast(Route, getattr(self, name))


class Sandbox(Section):
    """Where checks run and the limits each gets unless it says otherwise."""

    backend: Literal["auto", "docker", "bwrap", "subprocess"]
    image: str
    timeout: int
    memory: str
    cpus: float
    pids: int
    output_limit_bytes: int
    warm_pool: int
    ro_binds: tuple[str, ...]


class MemorySearch(Section):
    """How memory search ranks and fuses its hits."""

    mode: Literal["hybrid", "vector", "keyword"]
    k: int
    fusion: Literal["score", "rrf"]
    rrf_k: int
    depth: int
    vector_weight: float
    keyword_weight: float
    vector_norm: Norm
    keyword_norm: Norm
    floor_missing: bool
    recency_half_life_days: float | None
    cache_max_rows: int


class Memory(Section):
    """Which markdown files are memory, and how they are indexed and searched."""

    enabled: bool
    index_uri: str | None
    model: str
    sources: tuple[str, ...]
    extra_globs: tuple[str, ...]
    max_file_bytes: int
    chunk_max_chars: int
    optimize_minutes: int
    search: MemorySearch


class Reproduce(Section):
    """Whether and how a request's own code is run to see which files it reaches."""

    mode: Literal["auto", "on", "off"]
    python: str
    timeout: int
    memory: str


class Code(Section):
    """Which files the code index reads, and how many a response lists."""

    enabled: bool
    exclude: tuple[str, ...]
    default_excludes: bool
    max_file_bytes: int
    max_files: int
    max_results: int
    workers: int
    reproduce: Reproduce


class Retention(Section):
    """Which checkpoints `nexusd checkpoint gc` keeps."""

    keep_last: int
    keep_days: int
    daily_beyond: bool
    keep_passed: bool
    keep_named: bool


class Checkpoint(Section):
    """When checkpoints are made, what they leave out, and how long they are kept."""

    on_request: bool
    on_commit: bool
    max_untracked_file_bytes: int
    retention: Retention


class Daemon(Section):
    """The daemon's own settings."""

    log_level: Literal["debug", "info", "warning", "error"]


class Api(Section):
    """The loopback API: where it listens, and which role may do what."""

    enabled: bool
    host: str
    port: int
    max_body_bytes: int
    mcp_role: str | None
    roles: Mapping[str, tuple[str, ...]]
    categories: Mapping[str, str]
    other_categories: str
    actions: Mapping[str, str]


class Settings(Section):
    """Every section; `providers` and `checks` stay mappings, normalised where they are used."""

    version: int
    watch: Watch
    planner: Planner
    routing: Routing
    providers: Mapping[str, Mapping[str, Any]]
    checks: tuple[Mapping[str, Any], ...]
    sandbox: Sandbox
    memory: Memory
    code: Code
    checkpoint: Checkpoint
    daemon: Daemon
    api: Api


def build(cls: type[T], data: Mapping[str, Any]) -> T:
    """`cls` filled from validated data: nested sections built, lists made tuples."""
    module = sys.modules[__name__]
    values: dict[str, Any] = {}
    for name, kind in cls.__annotations__.items():
        value = data[name]
        nested = getattr(module, str(kind), None)
        if isinstance(nested, type) and issubclass(nested, Section):
            value = build(nested, value)
        elif name in _AS_GIVEN:
            value = tuple(value) if isinstance(value, list) else dict(value)
        else:
            value = _frozen(value)
        values[name] = value
    return cls(**values)


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


@functools.cache
def value_rules() -> dict[str, tuple[type | None, frozenset[str] | None]]:
    """Dotted key -> (the type a set value must have when the key may be null, its choices),
    read from the annotations: `X | None` and `Literal[...]` say it once, here."""
    rules: dict[str, tuple[type | None, frozenset[str] | None]] = {}

    def walk(cls: type[Section], prefix: str) -> None:
        for name, kind in typing.get_type_hints(cls).items():
            if isinstance(kind, type) and issubclass(kind, Section):
                walk(kind, f"{prefix}{name}.")
                continue
            args = typing.get_args(kind)
            nullable = typing.get_origin(kind) in (types.UnionType, typing.Union)
            inner = next((a for a in args if a is not type(None)), kind) if nullable else kind
            literal = typing.get_origin(inner) is Literal
            choices = frozenset(typing.get_args(inner)) if literal else None
            rules[f"{prefix}{name}"] = (cast(type, inner) if nullable else None, choices)

    walk(Settings, "")
    return rules
