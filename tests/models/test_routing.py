"""Per-role routing, the default provider fallback, limits, and the config keys."""

from __future__ import annotations

import copy

import pytest

from nexusd.config import Config, config_from_mapping
from nexusd.errors import ConfigError
from nexusd.models.routing import ROLES, limits, resolve_route, resolve_routes


def test_default_is_offline_for_every_role() -> None:
    routes = resolve_routes(config_from_mapping({}))
    assert set(routes) == set(ROLES)
    assert all(r.offline and r.planner_name == "offline" for r in routes.values())
    assert routes["architect"].format == "json"
    assert routes["builder"].format == "text"


def test_roles_fall_back_to_the_default_provider() -> None:
    config = config_from_mapping(
        {
            "planner": {"provider": "laptop"},
            "providers": {
                "laptop": {"type": "ollama", "model": "qwen2.5-coder:7b"},
                "cloud": {"type": "openai", "model": "gpt-4o-mini", "api_key_env": "OPENAI_KEY"},
            },
            "routing": {
                "architect": {"provider": "cloud", "temperature": 0.4, "max_tokens": 3000},
                "critic": {"model": "llama3:instruct"},
            },
        }
    )
    architect = resolve_route(config, "architect")
    assert architect.planner_name == "cloud:gpt-4o-mini"
    assert (architect.temperature, architect.max_tokens) == (0.4, 3000)
    assert resolve_route(config, "librarian").planner_name == "laptop:qwen2.5-coder:7b"
    assert resolve_route(config, "critic").planner_name == "laptop:llama3:instruct"


def test_a_bare_type_name_needs_no_providers_entry() -> None:
    config = config_from_mapping({"routing": {"builder": {"provider": "ollama", "model": "m"}}})
    route = resolve_route(config, "builder")
    assert route.provider.type == "ollama" and route.planner_name == "ollama:m"


def test_undefined_provider_names_the_key() -> None:
    # Loading refuses such a configuration; one built in code is refused when routed.
    with pytest.raises(ConfigError, match=r"`routing.critic.provider` names provider `nowhere`"):
        config_from_mapping({"routing": {"critic": {"provider": "nowhere"}}})
    data = copy.deepcopy(dict(config_from_mapping({}).data))
    data["routing"]["critic"]["provider"] = "nowhere"
    config = Config(data=data)
    with pytest.raises(ConfigError, match=r"routing.critic.provider: provider `nowhere`"):
        resolve_route(config, "critic")


def test_limits() -> None:
    lim = limits(
        config_from_mapping(
            {"planner": {"max_retries": 4, "timeout_ms": 1500, "max_context_tokens": 900}}
        )
    )
    assert (lim.max_retries, lim.timeout_s, lim.max_context_tokens) == (4, 1.5, 900)


@pytest.mark.parametrize(
    ("layer", "fragment"),
    [
        ({"providers": {"x": {"type": "openai", "colour": "red"}}}, "providers.x.colour"),
        ({"providers": {"x": {"model": "m"}}}, "providers.x.type"),
        ({"providers": {"x": {"type": "command", "timeout_ms": "soon"}}}, "providers.x.timeout_ms"),
        ({"providers": {"x": {"type": "command", "args": ["-p", 3]}}}, "providers.x.args"),
        ({"providers": ["x"]}, "providers"),
        ({"routing": {"critic": {"format": "xml"}}}, "routing.critic.format"),
        ({"routing": {"planner": {}}}, "routing.planner"),
        ({"routing": {"architect": {"temperature": "hot"}}}, "routing.architect.temperature"),
    ],
)
def test_bad_config_names_the_key(layer: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        config_from_mapping(layer)
