"""Which provider and model answers each role: librarian, architect, builder, critic.

`routing.<role>.provider` names an entry of `providers:` (or a bare type such
as `ollama`); a role left at null uses `planner.provider`, the default
provider. The model comes from the route, else from the provider's settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nexusd.config import Config
from nexusd.errors import ConfigError
from nexusd.models.base import OutputFormat
from nexusd.models.registry import ProviderSettings, label, settings_from_mapping

RoleName = Literal["librarian", "architect", "builder", "critic"]
ROLES: tuple[RoleName, ...] = ("librarian", "architect", "builder", "critic")


@dataclass(frozen=True)
class Route:
    """How one role calls its model."""

    role: RoleName
    provider: ProviderSettings
    model: str | None
    temperature: float
    max_tokens: int
    format: OutputFormat

    @property
    def offline(self) -> bool:
        """True when this role has no language model behind it."""
        return self.provider.type == "offline"

    @property
    def planner_name(self) -> str:
        """`provider:model` as shown in responses, or `offline`."""
        return label(self.provider, self.model)


@dataclass(frozen=True)
class Limits:
    """`planner.max_retries`, `planner.timeout_ms`, `planner.max_context_tokens`."""

    max_retries: int
    timeout_ms: int
    max_context_tokens: int

    @property
    def timeout_s(self) -> float:
        """The time box of one planning call, in seconds."""
        return self.timeout_ms / 1000.0


def limits(config: Config) -> Limits:
    """The planner's limits from the configuration."""
    return Limits(
        max_retries=config.planner.max_retries,
        timeout_ms=config.planner.timeout_ms,
        max_context_tokens=config.planner.max_context_tokens,
    )


def provider_settings(config: Config, name: str) -> ProviderSettings:
    """The settings of the provider called `name` (an entry of `providers:` or a type)."""
    return settings_from_mapping(name, config.providers.get(name))


def resolve_route(config: Config, role: RoleName) -> Route:
    """The route of `role`, falling back to `planner.provider` when the role sets none."""
    if role not in ROLES:
        raise ConfigError(f"unknown planner role `{role}`", hint="use one of: " + ", ".join(ROLES))
    raw = config.routing.role(role)
    name = raw.provider or config.planner.provider
    try:
        settings = provider_settings(config, name)
    except ConfigError as exc:
        source = f"routing.{role}.provider" if raw.provider else "planner.provider"
        raise ConfigError(f"{source}: {exc.message}", hint=exc.hint) from exc
    return Route(
        role=role,
        provider=settings,
        model=raw.model or settings.model,
        temperature=raw.temperature,
        max_tokens=raw.max_tokens,
        format=raw.format,
    )


def resolve_routes(config: Config) -> dict[RoleName, Route]:
    """Every role's route."""
    return {role: resolve_route(config, role) for role in ROLES}
