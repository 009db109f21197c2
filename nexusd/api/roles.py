"""Who may do what: roles, the categories of memory each may touch, the operations each may run,
and MEMORY.md as a role sees it.

Pure: an `Access` is built from the configuration's `api:` tables and answers questions;
nothing here reads a file. A role includes the roles `api.roles` lists under it, and
theirs (admin ⊇ developer ⊇ user by default). A memory category requires the role
`api.categories` names (a chunk in a category not listed requires `api.other_categories`);
an operation requires the role `api.actions` names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nexusd.config import Config
from nexusd.errors import AccessError

# What `memory_save` kinds are filed under: MEMORY.md's `## Lessons` etc., or the daily note.
KIND_CATEGORY = {
    "lesson": "lessons",
    "decision": "decisions",
    "preference": "preferences",
    "note": "notes",
}

# How a refusal names each operation: "role 'user' may not run checks".
ACTION_VERBS = {
    "read": "read the code and files",
    "plan": "request plans",
    "checks": "run checks",
    "checkpoint": "create checkpoints",
    "restore": "restore checkpoints",
}


def _closure(roles: Mapping[str, list[str]], role: str) -> frozenset[str]:
    seen: set[str] = set()
    todo = [role]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(roles.get(name, ()))
    return frozenset(seen)


def role_hint(need: str) -> str:
    """How a client gets role `need`: a token over HTTP, a flag over stdio."""
    return (
        f"use a token of role {need!r} or above (HTTP), or start the server with"
        f" `nexusd mcp --role {need}` (stdio)"
    )


@dataclass(frozen=True)
class Access:
    """The role tables of one configuration."""

    roles: Mapping[str, frozenset[str]]  # role -> every role it includes (itself too)
    categories: Mapping[str, str]  # category -> required role
    other_categories: str
    actions: Mapping[str, str]  # operation -> required role

    @classmethod
    def from_config(cls, config: Config) -> Access:
        """Read `api.roles`, `api.categories`, `api.other_categories`, `api.actions`."""
        table = {str(k): list(v) for k, v in config.api.roles.items()}
        return cls(
            roles={name: _closure(table, name) for name in table},
            categories=dict(config.api.categories),
            other_categories=config.api.other_categories,
            actions=dict(config.api.actions),
        )

    def check_role(self, role: str) -> str:
        """`role` if it is configured, else AccessError naming the roles there are."""
        if role not in self.roles:
            raise AccessError(
                f"unknown role {role!r}",
                hint="use one of: " + ", ".join(sorted(self.roles)) + " (api.roles)",
                status=400,
            )
        return role

    def includes(self, role: str, required: str) -> bool:
        """True when `role` is `required` or includes it."""
        return required in self.roles.get(role, frozenset())

    def required_for(self, category: str) -> str:
        """The role a chunk of `category` requires (listed or not)."""
        return self.categories.get(category.strip().lower(), self.other_categories)

    def readable(self, role: str) -> tuple[str, ...]:
        """The listed categories `role` may read and write."""
        return tuple(sorted(c for c, need in self.categories.items() if self.includes(role, need)))

    def sees_other_categories(self, role: str) -> bool:
        """True when `role` may also read chunks of unlisted categories."""
        return self.includes(role, self.other_categories)

    def require_category(self, role: str, category: str) -> str:
        """The category, normalized; 400 when it is unknown, 403 when `role` may not."""
        name = category.strip().lower()
        if name not in self.categories:
            raise AccessError(
                f"unknown category {category!r}",
                hint="valid categories: " + ", ".join(sorted(self.categories)),
                status=400,
            )
        need = self.categories[name]
        if not self.includes(role, need):
            raise AccessError(
                f"role {role!r} may not touch category {name!r}: it requires role {need!r}",
                hint=f"{role_hint(need)}, or change api.categories.{name}",
                status=403,
            )
        return name

    def require_action(self, role: str, action: str) -> None:
        """403 unless `role` may run `action` (plan, checks, checkpoint, restore, read)."""
        need = self.action_role(action)
        if not self.includes(role, need):
            raise AccessError(
                f"role {role!r} may not {ACTION_VERBS.get(action, action.replace('_', ' '))}:"
                f" it requires role {need!r}",
                hint=f"{role_hint(need)}, or change api.actions.{action}",
                status=403,
            )

    def action_role(self, action: str) -> str:
        """The role `action` requires (an operation not listed requires admin)."""
        return self.actions.get(action, "admin")

    def may(self, role: str, action: str) -> bool:
        """True when `role` may run `action`."""
        return self.includes(role, self.action_role(action))

    def least_role_for(self, category: str) -> str:
        """The role that may touch `category` and includes the fewest others (the default
        role of `nexusd mcp`: the least that can search and save lessons)."""
        need = self.required_for(category)
        able = [r for r in self.roles if self.includes(r, need)]
        return min(able, key=lambda r: (len(self.roles[r]), r))


def stdio_role(config: Config, access: Access, given: str | None) -> str:
    """The role of a stdio server: `--role`, else `api.mcp_role`, else the least for lessons."""
    if given is not None:  # `--role ""` is a mistake to name, not a request for the default
        return access.check_role(given)
    role = config.api.mcp_role or access.least_role_for("lessons")
    return access.check_role(str(role))


def visible_sections(text: str, may_read: Callable[[str], bool], path: str = "MEMORY.md") -> str:
    """`text` without the lines whose category `may_read` refuses, each line's category
    assigned as the memory index assigns its chunks' (`line_categories`: a `## Heading`'s
    section, or the nearest `# Heading` outside one), so a role sees here exactly the
    sections its searches can return. A note at the end names the categories left out."""
    from nexusd.memory.chunking import line_categories

    lines, categories = line_categories(path, text)
    kept: list[str] = []
    hidden: dict[str, None] = {}
    for line, category in zip(lines, categories, strict=True):
        if may_read(category):
            kept.append(line)
        elif line.strip():
            hidden[category or "(text outside any section)"] = None
    out = "\n".join(kept)
    if hidden:
        names = ", ".join(hidden)
        out = out.rstrip("\n") + f"\n\n<!-- not shown to your role: {names} -->\n"
    return out
