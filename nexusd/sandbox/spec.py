"""What one check asks for: its command and limits, normalized once from the config."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nexusd.config import Config
from nexusd.errors import ConfigError

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}

# The variables every backend passes through; anything else needs the check's `env`.
BASE_ENV = ("PATH", "LANG")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
WORKDIR = "/workspace"


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
        specs.append(
            CheckSpec(
                name=entry["name"],
                run=entry["run"],
                image=entry.get("image") or sandbox.image,
                timeout=float(entry.get("timeout", sandbox.timeout)),
                memory_bytes=parse_memory(
                    entry.get("memory", sandbox.memory), f"checks[{i}].memory"
                ),
                cpus=float(entry.get("cpus", sandbox.cpus)),
                pids=int(entry.get("pids", sandbox.pids)),
                network=bool(entry.get("network", False)),
                when=tuple(entry["when"]),
                env=tuple(entry["env"]),
                output_limit=int(sandbox.output_limit_bytes),
            )
        )
    return tuple(specs)
