"""What one check asks for: its command and limits, normalized once from the config."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nexusd.config import Config
from nexusd.errors import ConfigError

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}

# The variables every backend passes through; anything else needs the check's `env`.
BASE_ENV = ("PATH", "LANG")
WORKDIR = "/workspace"
MIN_MEMORY = 4 * 1024**2


@dataclass(frozen=True)
class CheckSpec:
    """One configured check with every limit resolved (check value, else `sandbox.*`)."""

    name: str
    run: str
    image: str
    timeout: float
    memory_bytes: int
    cpus: float
    pids: int
    network: bool = False
    when: tuple[str, ...] = ("request",)
    env: tuple[str, ...] = ()
    output_limit: int = 65_536


def parse_memory(text: str, key: str = "memory") -> int:
    """Bytes in a size such as `256m`, `1g`, `512MiB` or `1048576`."""
    match = _MEMORY.match(str(text))
    if not match:
        raise ConfigError(
            f"`{key}` is not a size: {text!r}", hint="write a size such as 256m, 1g or 512MiB"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def memory_limit(text: str, key: str) -> int:
    """A check's memory limit in bytes: a size (`parse_memory`) a check can start within,
    else a ConfigError naming `key`."""
    return _at_least(parse_memory(text, key), MIN_MEMORY, key)


def check_specs(
    config: Config, names: Sequence[str] = (), when: str | None = None
) -> tuple[CheckSpec, ...]:
    """The configured checks, filtered by name (unknown names are errors) and by `when`."""
    sandbox = config.sandbox
    entries = list(config.checks)
    known = {entry["name"] for entry in entries}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(
            f"no check named {', '.join(unknown)}",
            hint="configured checks: " + (", ".join(sorted(known)) or "none (add `checks:`)"),
        )
    specs = []
    for i, entry in enumerate(entries):
        if names and entry["name"] not in names:
            continue
        if when is not None and when not in entry["when"]:
            continue

        pick = functools.partial(_pick, entry, i)
        memory, memory_key = pick("memory", sandbox.memory)
        specs.append(
            CheckSpec(
                name=entry["name"],
                run=entry["run"],
                image=entry.get("image") or sandbox.image,
                timeout=_positive(*pick("timeout", sandbox.timeout), "seconds, such as 120"),
                memory_bytes=memory_limit(memory, memory_key),
                cpus=_positive(*pick("cpus", sandbox.cpus), "CPUs, such as 1 or 0.5"),
                pids=int(_positive(*pick("pids", sandbox.pids), "processes, such as 128")),
                network=bool(entry.get("network", False)),
                when=tuple(entry["when"]),
                env=tuple(entry["env"]),
                output_limit=int(sandbox.output_limit_bytes),
            )
        )
    return tuple(specs)


def _pick(entry: Mapping[str, Any], i: int, key: str, default: object) -> tuple[Any, str]:
    # The key the value came from, for an error that names the line to fix.
    return (entry[key], f"checks[{i}].{key}") if key in entry else (default, f"sandbox.{key}")


def _positive(value: Any, key: str, example: str) -> float:
    """`value` as a finite number above 0, else a ConfigError naming `key`."""
    number = (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    )
    if number is None or not math.isfinite(number) or number <= 0:
        raise ConfigError(
            f"`{key}` must be a number above 0, got {value!r}",
            hint=f"set `{key}` to a number of {example} (or delete it to inherit the default)",
        )
    return number


def _at_least(size: int, minimum: int, key: str) -> int:
    # Below about a megabyte not even the shell starts: it would die with a bare SIGSEGV.
    if size < minimum:
        raise ConfigError(
            f"`{key}` is {size} bytes, too little for any check to start",
            hint=f"set `{key}` to a size such as 256m (at least {minimum // 1024**2}m)",
        )
    return size
