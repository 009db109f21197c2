"""Provider references are checked when the configuration is loaded, naming key and file."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.config import config_from_mapping, load_config
from nexusd.errors import ConfigError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_an_undefined_planner_provider_names_the_key_and_the_file(repo: Path) -> None:
    config = _write(repo / ".nexus" / "config.yaml", "planner: {provider: nope}\n")
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    message = str(info.value)
    assert f"{config}: `planner.provider` names provider `nope`, which is not defined" in message
    assert "providers:" in message and "llamacpp" in message  # the fix: define it or a type


def test_every_bad_reference_is_reported_at_once(repo: Path) -> None:
    _write(
        repo / ".nexus" / "config.yaml",
        "routing:\n  critic: {provider: judge}\n  builder: {provider: coder}\n"
        "providers:\n  odd: {type: gpt5}\n  tiny: {type: llamacpp}\n  agent: {type: command}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    messages = [p.message for p in info.value.problems]
    assert any("`routing.critic.provider` names provider `judge`" in m for m in messages)
    assert any("`routing.builder.provider` names provider `coder`" in m for m in messages)
    assert any("`providers.odd.type` names type `gpt5`" in m for m in messages)
    assert any("`providers.tiny.model_path` is missing" in m for m in messages)
    assert any("`providers.agent.command` is missing" in m for m in messages)
    assert len(messages) == 5


def test_a_provider_the_user_file_defines_may_be_named_by_the_repository(
    repo: Path, _isolated_home: Path
) -> None:
    _write(
        _isolated_home / ".config" / "nexusd" / "config.yaml",
        "providers:\n  laptop: {type: ollama, model: 'qwen2.5-coder:7b'}\n",
    )
    _write(repo / ".nexus" / "config.yaml", "planner: {provider: laptop}\n")
    assert load_config(repo).get("planner.provider") == "laptop"


def test_bare_type_names_need_no_entry() -> None:
    config = config_from_mapping(
        {"planner": {"provider": "ollama"}, "routing": {"critic": {"provider": "offline"}}}
    )
    assert config.get("planner.provider") == "ollama"


def test_an_invalid_entry_is_one_problem_not_also_an_undefined_reference() -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping(
            {"planner": {"provider": "tiny"}, "providers": {"tiny": {"type": "llamacpp"}}}
        )
    assert [p.message for p in info.value.problems] == [
        "<mapping>: `providers.tiny.model_path` is missing (a llamacpp provider needs it)"
    ]
