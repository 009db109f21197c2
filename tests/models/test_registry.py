"""Provider discovery by type name, and normalising `providers:` entries."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from nexusd.errors import ConfigError
from nexusd.models.registry import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    Message,
    ModelCall,
    ProviderError,
    ProviderSettings,
    create_provider,
    label,
    provider_types,
    settings_from_mapping,
)


def test_builtin_types_are_known() -> None:
    assert set(BUILTIN) <= set(provider_types())
    assert set(BUILTIN) == {"offline", "openai", "ollama", "command", "llamacpp"}


def test_installed_entry_points_name_our_factories() -> None:
    ours = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if not ours:
        pytest.skip("nexusd is not installed (pip install -e .): no entry-point metadata")
    for name, target in BUILTIN.items():
        assert ours[name] == target


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ({"type": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m"}, "OpenAIProvider"),
        ({"type": "ollama", "model": "m"}, "OllamaProvider"),
        ({"type": "command", "command": "llm -m {model}"}, "CommandProvider"),
        ({"type": "llamacpp", "model_path": "/models/x.gguf"}, "LlamaCppProvider"),
        (None, "OfflineProvider"),
    ],
)
def test_create_each_type(raw: dict | None, kind: str) -> None:
    name = "offline" if raw is None else "mine"
    provider = create_provider(settings_from_mapping(name, raw))
    assert type(provider).__name__ == kind
    assert provider.settings.name == name


def test_command_string_is_split_like_a_shell() -> None:
    settings = settings_from_mapping("c", {"type": "command", "command": "codex exec --json 'a b'"})
    assert settings.command == ("codex", "exec", "--json", "a b")


def test_unknown_type_and_unknown_name() -> None:
    with pytest.raises(ConfigError, match="unknown provider type `gpt5`"):
        create_provider(ProviderSettings(name="x", type="gpt5"))
    with pytest.raises(ConfigError, match="provider `mystery` is not defined"):
        settings_from_mapping("mystery", None)


def test_offline_provider_delegates_or_explains() -> None:
    call = ModelCall(messages=(Message("user", "hi"),))
    settings = ProviderSettings(name="offline", type="offline")
    assert create_provider(settings, offline_answer=lambda c: "from pipeline").complete(
        call
    ).text == ("from pipeline")
    with pytest.raises(ProviderError) as info:
        create_provider(settings).complete(call)
    assert "providers:" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("settings", "model", "expected"),
    [
        (ProviderSettings(name="offline", type="offline"), None, "offline"),
        (
            ProviderSettings(name="openai", type="openai", model="gpt-4o-mini"),
            None,
            "openai:gpt-4o-mini",
        ),
        (ProviderSettings(name="local", type="ollama", model="a"), "b", "local:b"),
    ],
)
def test_label(settings: ProviderSettings, model: str | None, expected: str) -> None:
    assert label(settings, model) == expected


def test_a_third_party_provider_is_found_through_its_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real installed-distribution layout on sys.path: a module plus its dist-info.
    (tmp_path / "echo_planner.py").write_text(
        "from nexusd.models.registry import Completion\n"
        "class Echo:\n"
        "    def __init__(self, settings):\n"
        "        self.settings = settings\n"
        "    def complete(self, call):\n"
        "        return Completion(text=call.messages[-1].content.upper(), model='echo')\n"
    )
    dist = tmp_path / "echo_planner-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-planner\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[nexusd.planners]\necho = echo_planner:Echo\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert provider_types()["echo"] == "echo_planner:Echo"
    provider = create_provider(settings_from_mapping("shout", {"type": "echo"}))
    done = provider.complete(ModelCall(messages=(Message("user", "plan it"),)))
    assert (done.text, done.model) == ("PLAN IT", "echo")
