"""Validation of the `api:` section's access tables: roles, categories and actions.

`api.roles` maps each role to the roles it includes (a ladder or a lattice);
`api.categories` maps each memory category to the role it requires; `api.actions`
maps each non-memory operation (plans, checks, checkpoints, restore) to the role it
requires. A configured table is merged over the defaults (a category can be added or
given another role, not removed). Every problem is appended to the caller's list, so
one load names everything wrong at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nexusd.config.entries import type_error
from nexusd.errors import ConfigError

# A role or category name: what a URL, a YAML key and a markdown heading all take.
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
ACTIONS = ("read", "plan", "checks", "checkpoint", "restore")


def _bad_name(origin: str, dotted: str, name: Any) -> ConfigError:
    return ConfigError(
        f"{origin}: `{dotted}`: {name!r} is not a valid name",
        hint="use lowercase letters, digits, - and _ (starting with a letter, at most 40)",
    )


def validate_roles(
    value: Any, origin: str, current: Mapping[str, Any], problems: list[ConfigError]
) -> dict[str, list[str]]:
    """`current` updated with the valid entries of `api.roles` (role -> included roles)."""
    out = {str(k): list(v) for k, v in current.items()}
    if not isinstance(value, dict):
        problems.append(type_error(origin, "api.roles", "a mapping of role -> [roles]", value))
        return out
    for name, included in value.items():
        where = f"api.roles.{name}"
        if not isinstance(name, str) or not NAME.match(name):
            problems.append(_bad_name(origin, "api.roles", name))
        elif included is None:
            out[name] = []
        elif not isinstance(included, list) or not all(isinstance(r, str) for r in included):
            problems.append(type_error(origin, where, "a list of role names", included))
        else:
            out[name] = list(included)
    return out


def validate_table(
    value: Any, origin: str, dotted: str, current: Mapping[str, Any], problems: list[ConfigError]
) -> dict[str, str]:
    """`current` updated with the valid entries of `api.categories` or `api.actions`."""
    out = {str(k): str(v) for k, v in current.items()}
    if not isinstance(value, dict):
        problems.append(type_error(origin, dotted, "a mapping of name -> role", value))
        return out
    for name, role in value.items():
        if not isinstance(name, str) or not NAME.match(name):
            problems.append(_bad_name(origin, dotted, name))
        elif dotted == "api.actions" and name not in ACTIONS:
            problems.append(
                ConfigError(
                    f"{origin}: unknown key `{dotted}.{name}`",
                    hint="the actions are: " + ", ".join(ACTIONS),
                )
            )
        elif not isinstance(role, str) or not role.strip():
            problems.append(type_error(origin, f"{dotted}.{name}", "a role name", role))
        else:
            out[name] = role
    return out


def check_access(api: Mapping[str, Any], problems: list[ConfigError]) -> None:
    """After every layer is merged: each role named anywhere must exist in `api.roles`."""
    roles = api["roles"]
    known = ", ".join(sorted(roles))

    def need(dotted: str, role: Any) -> None:
        if role is not None and role not in roles:
            problems.append(
                ConfigError(
                    f"the configuration: `{dotted}` names role {role!r}, "
                    "which is not in `api.roles`",
                    hint=f"use one of: {known}, or add it under `api.roles`",
                )
            )

    for name, included in roles.items():
        for role in included:
            need(f"api.roles.{name}", role)
    for name, role in api["categories"].items():
        need(f"api.categories.{name}", role)
    for name, role in api["actions"].items():
        need(f"api.actions.{name}", role)
    need("api.other_categories", api["other_categories"])
    need("api.mcp_role", api["mcp_role"])
    if api["host"] not in ("127.0.0.1", "::1", "localhost"):
        problems.append(
            ConfigError(
                f"the configuration: `api.host` is {api['host']!r}; the API serves loopback only",
                hint="set `api.host` to 127.0.0.1, ::1 or localhost",
            )
        )
