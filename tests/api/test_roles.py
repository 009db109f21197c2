"""Roles, categories and actions from the configuration (pure: no git, no model)."""

from __future__ import annotations

import pytest

from nexusd.api.roles import Access, stdio_role, visible_sections
from nexusd.config import config_from_mapping
from nexusd.errors import AccessError, ConfigError


def access(layer: dict[str, object] | None = None) -> Access:
    return Access.from_config(config_from_mapping({"api": layer or {}}))


def test_default_ladder_follows_the_seed_table() -> None:
    a = access()
    assert a.includes("admin", "user") and a.includes("admin", "analyst")
    assert not a.includes("developer", "analyst") and not a.includes("user", "developer")
    assert a.require_category("user", "Lessons") == "lessons"
    assert a.require_category("analyst", "finance") == "finance"
    with pytest.raises(AccessError) as denied:
        a.require_category("developer", "finance")
    assert denied.value.status == 403 and "requires role 'analyst'" in str(denied.value)
    with pytest.raises(AccessError) as unknown:
        a.require_category("admin", "gossip")
    assert unknown.value.status == 400 and "conversation, daily, decisions" in str(unknown.value)
    with pytest.raises(AccessError) as restore:
        a.require_action("developer", "restore")
    assert restore.value.status == 403
    a.require_action("admin", "restore")


def test_stdio_role_defaults_to_the_least_that_saves_lessons() -> None:
    config = config_from_mapping({})
    assert stdio_role(config, Access.from_config(config), None) == "user"
    strict = config_from_mapping({"api": {"categories": {"lessons": "developer"}}})
    assert stdio_role(strict, Access.from_config(strict), None) == "developer"
    assert stdio_role(config, Access.from_config(config), "admin") == "admin"
    with pytest.raises(AccessError, match="unknown role ''"):
        stdio_role(config, Access.from_config(config), "")
    with pytest.raises(AccessError):
        stdio_role(config, Access.from_config(config), "root")


def test_refusals_name_the_operation_in_words() -> None:
    a = access()
    refusals = {}
    for action in ("read", "plan", "checks", "checkpoint", "restore"):
        with pytest.raises(AccessError) as caught:
            a.require_action("nobody", action)
        refusals[action] = caught.value.message
    assert "may not run checks:" in refusals["checks"]
    assert "may not restore checkpoints:" in refusals["restore"]
    assert "may not create checkpoints:" in refusals["checkpoint"]
    assert "may not request plans:" in refusals["plan"]


def test_configured_tables_merge_and_bad_entries_name_the_key() -> None:
    a = access({"roles": {"ops": ["developer"]}, "categories": {"runbooks": "ops"}})
    assert a.includes("ops", "user") and a.require_category("ops", "runbooks") == "runbooks"
    assert a.required_for("lessons") == "user"  # defaults stay
    with pytest.raises(ConfigError) as bad:
        config_from_mapping(
            {"api": {"categories": {"runbooks": "ops"}, "actions": {"deploy": "admin"}}}
        )
    text = str(bad.value)
    assert "`api.categories.runbooks` names role 'ops'" in text
    assert "unknown key `api.actions.deploy`" in text
    with pytest.raises(ConfigError, match="loopback only"):
        config_from_mapping({"api": {"host": "0.0.0.0"}})
    with pytest.raises(ConfigError, match=r"api\.nope"):
        config_from_mapping({"api": {"nope": 1}})


def test_memory_md_shows_a_role_only_its_sections() -> None:
    text = "# Memory\n\nintro\n\n## Lessons\n\n- a\n\n## Security\n\n- key\n```\n## not\n```\n"
    a = access()
    shown = visible_sections(text, lambda c: a.includes("user", a.required_for(c)))
    assert "- a" in shown and "## Lessons" in shown
    assert "- key" not in shown and "not shown to your role: memory, security" in shown
    assert "intro" not in shown  # indexed under `memory`: an unlisted category
    assert "intro" in visible_sections(text, lambda c: a.includes("developer", a.required_for(c)))


def test_memory_md_level_one_sections_are_boundaries_as_in_the_index() -> None:
    text = (
        "## Lessons\n\n- retry once\n\n# Infra secrets\n\n- root pw is pw123\n\n"
        "### Rotation\n\n- monthly\n\n## Notes\n\n- a note\n"
    )
    a = access()
    shown = visible_sections(text, lambda c: a.includes("user", a.required_for(c)))
    assert "retry once" in shown and "a note" in shown
    assert "pw123" not in shown and "monthly" not in shown and "Infra" not in shown.split("<!--")[0]
    assert "not shown to your role: infra secrets, rotation" in shown
