"""One configuration loader: defaults < user file < repository file, validated once.

Every key has a default in `defaults.DEFAULTS`; unknown keys are errors that name the key
and the file, and one load reports every problem it finds, not only the first.
`Config.sources` says where each effective value came from, for `nexusd config show`.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexusd.config.access import check_access, validate_roles, validate_table
from nexusd.config.defaults import DEFAULTS
from nexusd.config.entries import (
    type_error,
    validate_checks,
    validate_provider_refs,
    validate_providers,
)
from nexusd.config.ranges import in_range, range_error
from nexusd.config.sections import (
    Api,
    Checkpoint,
    Code,
    Daemon,
    Memory,
    Planner,
    Routing,
    Sandbox,
    Settings,
    Watch,
    build,
    value_rules,
)
from nexusd.errors import ConfigError


@dataclass(frozen=True)
class Config:
    """The merged, validated configuration and where each value came from.

    Read it typed, section by section: `config.watch.debounce_ms`, `config.memory.search.k`.
    """

    data: Mapping[str, Any]
    sources: Mapping[str, str] = field(default_factory=dict)

    @functools.cached_property
    def settings(self) -> Settings:
        """Every section as typed values (built once, on first use)."""
        return build(Settings, self.data)

    @property
    def watch(self) -> Watch:
        """`watch:`"""
        return self.settings.watch

    @property
    def planner(self) -> Planner:
        """`planner:`"""
        return self.settings.planner

    @property
    def routing(self) -> Routing:
        """`routing:`"""
        return self.settings.routing

    @property
    def providers(self) -> Mapping[str, Mapping[str, Any]]:
        """`providers:`, by name."""
        return self.settings.providers

    @property
    def checks(self) -> tuple[Mapping[str, Any], ...]:
        """`checks:`, in order."""
        return self.settings.checks

    @property
    def sandbox(self) -> Sandbox:
        """`sandbox:`"""
        return self.settings.sandbox

    @property
    def memory(self) -> Memory:
        """`memory:`"""
        return self.settings.memory

    @property
    def code(self) -> Code:
        """`code:`"""
        return self.settings.code

    @property
    def checkpoint(self) -> Checkpoint:
        """`checkpoint:`"""
        return self.settings.checkpoint

    @property
    def daemon(self) -> Daemon:
        """`daemon:`"""
        return self.settings.daemon

    @property
    def api(self) -> Api:
        """`api:`"""
        return self.settings.api

    def get(self, dotted: str) -> Any:
        """Value of a dotted key such as `watch.debounce_ms`, for `nexusd config` (untyped)."""
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
    """Load defaults, then the user file, then `<root>/.nexus/config.yaml`; validate each.

    Raises one ConfigError naming every problem found in every file.
    """
    data = copy.deepcopy(DEFAULTS)
    sources: dict[str, str] = {}
    problems: list[ConfigError] = []
    layers = [user_file if user_file is not None else user_config_path()]
    if root is not None:
        layers.append(root / ".nexus" / "config.yaml")
    for path in layers:
        try:
            layer = _read_layer(path)
        except ConfigError as exc:
            problems.append(exc)
            continue
        if layer is not None:
            _merge(data, layer, "", str(path), sources, problems=problems)
    validate_provider_refs(data, sources, problems)
    check_access(data["api"], problems)
    _raise_problems(problems)
    return Config(data=data, sources=sources)


def config_from_mapping(layer: Mapping[str, Any], origin: str = "<mapping>") -> Config:
    """Validate a mapping over the defaults (for tests and programmatic use)."""
    data = copy.deepcopy(DEFAULTS)
    sources: dict[str, str] = {}
    problems: list[ConfigError] = []
    _merge(data, dict(layer), "", origin, sources, problems=problems)
    validate_provider_refs(data, sources, problems)
    check_access(data["api"], problems)
    _raise_problems(problems)
    return Config(data=data, sources=sources)


def _raise_problems(problems: list[ConfigError]) -> None:
    if len(problems) == 1:
        raise problems[0]
    if problems:
        lines = [f"{len(problems)} problems in the configuration:"]
        for problem in problems:
            lines.append(f"  - {problem.message}")
            if problem.hint:
                lines.append(f"    fix: {problem.hint}")
        raise ConfigError("\n".join(lines), problems=problems)


def _read_layer(path: Path) -> dict[str, Any] | None:
    try:
        if not path.is_file():
            if not os.path.lexists(path):
                return None
            # A folder, or a link to nothing, in the file's place: the settings the user
            # meant to give would be left out without a word.
            what = "a folder" if path.is_dir() else "not a regular file (a broken link?)"
            raise ConfigError(
                f"{path}: is {what}, so its settings cannot be read",
                hint="put the configuration file there (or fix where the link points),"
                " or remove it to use the defaults",
            )
        data = path.read_bytes()
    except OSError as exc:
        # A running daemon reloads this file: an unreadable one is a problem to report,
        # never an exception that ends the daemon.
        raise ConfigError(
            f"{path}: cannot be read ({exc.strerror or exc})",
            hint="make it a readable regular file (check its permissions, or where a link"
            " points), or delete it to use the defaults",
        ) from exc
    # Imported here: its ~20 ms are paid only when a file is read, not on a cached or
    # default configuration (`nexusd.config.cache`).
    import yaml

    from nexusd.yamlload import MAX_DEPTH, DuplicateKey, NestingTooDeep, load

    try:
        loaded = load(data.decode("utf-8"), strict=True)
    except DuplicateKey as exc:
        raise ConfigError(
            f"{path}: {exc} (YAML would keep only the second)",
            hint=f"merge the two `{exc.key}` entries into one",
        ) from exc
    except NestingTooDeep as exc:
        where = f", on line {exc.line}" if exc.line is not None else ""
        raise ConfigError(
            f"{path}: {exc.problem}{where}",
            hint=f"flatten it (nexusd reads at most {MAX_DEPTH} levels): its settings nest"
            " a few levels at most, as `nexusd config` shows",
        ) from exc
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
    base: dict[str, Any],
    layer: dict[str, Any],
    prefix: str,
    origin: str,
    sources: dict[str, str],
    *,
    problems: list[ConfigError],
) -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if not isinstance(key, str) or key not in base:
            known = ", ".join(sorted(base))
            problems.append(
                ConfigError(
                    f"{origin}: unknown key `{dotted}`",
                    hint=f"remove it or use one of: {known}",
                )
            )
            continue
        default = base[key]
        if dotted == "providers":
            base[key] = validate_providers(value, origin, default, problems)
            sources[dotted] = origin
            continue
        if dotted == "checks":
            base[key] = validate_checks(value, origin, problems)
            sources[dotted] = origin
            continue
        if dotted == "api.roles":
            base[key] = validate_roles(value, origin, default, problems)
            sources[dotted] = origin
            continue
        if dotted in ("api.categories", "api.actions"):
            base[key] = validate_table(value, origin, dotted, default, problems)
            sources[dotted] = origin
            continue
        if isinstance(default, dict):
            if value is None:
                # `watch:` with every key below it commented out: nothing is set.
                continue
            if not isinstance(value, dict):
                problems.append(
                    ConfigError(
                        f"{origin}: `{dotted}` must be a mapping, got {type(value).__name__}",
                        hint=f"write `{key}:` followed by indented keys",
                    )
                )
                continue
            _merge(default, value, f"{dotted}.", origin, sources, problems=problems)
            continue
        try:
            base[key] = _validate(dotted, default, value, origin)
        except ConfigError as exc:
            problems.append(exc)
            continue
        sources[dotted] = origin


def _validate(dotted: str, default: Any, value: Any, origin: str) -> Any:
    nullable, choices = value_rules().get(dotted, (None, None))
    if value is None and (default is None or nullable is not None):
        return None
    want: type = nullable or type(default)
    if want is bool:
        if not isinstance(value, bool):
            raise type_error(origin, dotted, "true or false", value)
    elif want is int or want is float:
        whole = want is int
        kind = int if whole else int | float
        if isinstance(value, bool) or not isinstance(value, kind) or not in_range(dotted, value):
            raise range_error(origin, dotted, value, whole=whole)
        value = value if whole else float(value)
    elif want is str:
        if not isinstance(value, str) or not value.strip():
            raise type_error(origin, dotted, "a non-empty string", value)
    elif want is list and (
        not isinstance(value, list) or not all(isinstance(v, str) for v in value)
    ):
        raise type_error(origin, dotted, "a list of strings", value)
    if choices is not None and value not in choices:
        raise type_error(origin, dotted, "one of " + ", ".join(sorted(choices)), value)
    return value
