"""Every numeric configuration key has a range of its own (not the 64 bits of an int), the
real loader refuses a value outside it naming the key and the range, and every config
nexusd ships or documents stays inside."""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from nexusd.config import DEFAULTS, config_from_mapping, load_config
from nexusd.config.entries import CHECK_KEYS, PROVIDER_KEYS
from nexusd.config.ranges import RANGES, Range, range_of, wanted
from nexusd.config.sections import value_rules
from nexusd.errors import ConfigError
from nexusd.templates import template_text

ROOT = Path(__file__).resolve().parents[2]


def _numeric_defaults(data: dict[str, Any], prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_numeric_defaults(value, f"{prefix}{key}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = value
    return out


def _numeric_keys() -> set[str]:
    """Every key a number is configured by: in the defaults (a null default too), the
    provider entries and the check entries."""
    keys = set(_numeric_defaults(DEFAULTS))
    keys |= {k for k, (nullable, _) in value_rules().items() if nullable in (int, float)}
    keys |= {f"providers.p.{k}" for k, kind in PROVIDER_KEYS.items() if kind is int}
    numbers = {int, float}
    for key, kind in CHECK_KEYS.items():
        if numbers & set(kind if isinstance(kind, tuple) else (kind,)):
            keys.add(f"checks[0].{key}")
    return keys


def test_every_numeric_key_has_its_own_range_and_its_default_is_in_it() -> None:
    keys = _numeric_keys()
    assert "planner.max_context_tokens" in keys and "checks[0].pids" in keys
    for key in keys:
        found = range_of(key)  # KeyError, naming the key, when one has none
        assert found.high < 2**62, key  # a bound of its own, not an int's
    for key, value in _numeric_defaults(DEFAULTS).items():
        low, high, above, _ = range_of(key)
        assert (low < value if above else low <= value) and value <= high, key
    concrete = {
        re.sub(r"^(routing|providers)\.[^.]+\.", r"\1.*.", k).replace("checks[0]", "checks[]")
        for k in keys
    }
    assert concrete == set(RANGES), "RANGES names a key no section has"


def _layer(key: str, value: Any) -> tuple[dict[str, Any], str]:
    """A configuration setting `key` (a RANGES key) to `value`, and the key as it is named."""
    head, _, name = key.rpartition(".")
    if head == "checks[]":
        return {"checks": [{"name": "a", "run": "x", name: value}]}, f"checks[0].{name}"
    if head == "providers.*":
        return {"providers": {"p": {"type": "openai", name: value}}}, f"providers.p.{name}"
    dotted = key.replace("routing.*.", "routing.critic.")
    layer: dict[str, Any] = {}
    node = layer
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return layer, dotted


def _outside(found: Range) -> list[int]:
    """Values just outside the range, and one absurdly far (every bound is whole)."""
    below = int(found.low) if found.above else int(found.low) - 1
    return [below, int(found.high) + 1, 10**18]


@pytest.mark.parametrize("key", sorted(RANGES))
def test_a_value_outside_the_range_is_refused_naming_key_and_range(key: str, repo: Path) -> None:
    found = RANGES[key]
    path = repo / ".nexus" / "config.yaml"
    path.parent.mkdir()
    for value in _outside(found):
        layer, dotted = _layer(key, value)
        path.write_text(yaml.safe_dump(layer), encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            load_config(repo)  # the real loader on a real file
        message, hint = info.value.message, info.value.hint or ""
        assert f"{path}: `{dotted}` must be" in message and f"got {value}" in message, message
        wants = {wanted(dotted, whole=True), wanted(dotted, whole=False)}
        assert any(f"must be {want}, got" in message for want in wants), message
        assert f"set `{dotted}` to" in hint, hint
        if found.low != found.high:
            assert f"≤ {int(found.high)}" in message, message


@pytest.mark.parametrize("key", sorted(RANGES))
def test_the_edges_of_each_range_load(key: str) -> None:
    found = RANGES[key]
    edges = [found.low + 0.5, found.high] if found.above else [found.low, found.high]
    for value in edges:
        layer, _ = _layer(key, value)
        config_from_mapping(layer, "edge")


def test_the_template_the_readme_and_the_demo_stay_in_range(repo: Path) -> None:
    config_from_mapping(yaml.safe_load(template_text("config")), "template")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, flags=re.S)
    assert len(blocks) >= 5
    for block in blocks:
        config_from_mapping(yaml.safe_load(block), "README.md")
    spec = importlib.util.spec_from_file_location("demo", ROOT / "scripts" / "demo.py")
    assert spec is not None and spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        textwrap.dedent(demo.FILES[".nexus/config.yaml"]), encoding="utf-8"
    )
    assert load_config(repo).checks[0]["timeout"] == 60


@pytest.mark.parametrize(
    ("text", "key", "want"),
    [
        # The defect as reported: a count bounded only by 64 bits.
        (
            "planner:\n  max_context_tokens: 1000000000000000000\n",
            "planner.max_context_tokens",
            "a whole number ≥ 1 and ≤ 10000000",
        ),
        ("sandbox:\n  pids: 9223372036854775807\n", "sandbox.pids", "≥ 1 and ≤ 4194304"),
        ("memory:\n  search:\n    k: -3\n", "memory.search.k", "≥ 1 and ≤ 100"),
        ("watch:\n  queue_size: 0\n", "watch.queue_size", "≥ 1 and ≤ 1000000"),
        (
            "routing:\n  architect:\n    temperature: 7.5\n",
            "routing.architect.temperature",
            "a number ≥ 0 and ≤ 2",
        ),
        (
            "providers:\n  local: {type: openai, n_threads: 100000}\n",
            "providers.local.n_threads",
            "≥ 1 and ≤ 1024",
        ),
        ("checks:\n- {name: a, run: x, timeout: 0}\n", "checks[0].timeout", "> 0 and ≤ 31622400"),
        ("version: 2\n", "version", "must be 1, got 2"),
        # Once the daemon's start: an OverflowError from the scheduler, exit 70.
        ("watch:\n  rescan_seconds: 99999999999999999999\n", "watch.rescan_seconds", "≤ 31622400"),
        ("planner:\n  timeout_ms: 1000000000000000\n", "planner.timeout_ms", "≤ 31622400000"),
        ("api:\n  port: 99999\n", "api.port", "≥ 1 and ≤ 65535"),
        # An int past a float's range: math.isfinite raised OverflowError on it.
        ("watch:\n  debounce_ms: " + "9" * 400 + "\n", "watch.debounce_ms", "≤ 31622400000"),
        ("checks:\n- {name: a, run: x, pids: " + "9" * 400 + "}\n", "checks[0].pids", "≥ 1"),
        ("api:\n  port: 0\n", "api.port", "≥ 1 and ≤ 65535"),
        # Once: every memory file indexed into zero chunks, without a word.
        ("memory:\n  chunk_max_chars: 0\n", "memory.chunk_max_chars", "≥ 1"),
        ("sandbox:\n  cpus: .nan\n", "sandbox.cpus", "a number > 0"),
        ("routing:\n  critic:\n    temperature: .inf\n", "routing.critic.temperature", "≥ 0"),
        ("checks:\n- {name: a, run: x, timeout: .inf}\n", "checks[0].timeout", "≤ 31622400"),
        ("checks:\n- {name: a, run: x, cpus: .nan}\n", "checks[0].cpus", "a number"),
        (
            "providers:\n  p: {type: openai, timeout_ms: 100000000000000000000000}\n",
            "providers.p.timeout_ms",
            "≥ 1 and ≤ 31622400000",
        ),
        (  # a provider's name may hold dots
            "providers:\n  llama3.2: {type: ollama, model: m, timeout_ms: 0}\n",
            "providers.llama3.2.timeout_ms",
            "≥ 1 and ≤ 31622400000",
        ),
    ],
)
def test_absurd_values_in_a_real_file_are_refused(
    repo: Path, text: str, key: str, want: str
) -> None:
    path = repo / ".nexus" / "config.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert f"{path}: `{key}` must be" in info.value.message and want in info.value.message
    assert f"set `{key}` to" in (info.value.hint or "")


def test_a_provider_named_with_dots_loads(repo: Path) -> None:
    path = repo / ".nexus" / "config.yaml"
    path.parent.mkdir()
    text = "providers:\n  gpt-3.5: {type: openai, model: m, timeout_ms: 30000}\n"
    path.write_text(text, encoding="utf-8")
    assert load_config(repo).providers["gpt-3.5"]["timeout_ms"] == 30000


def test_a_checks_true_or_false_key_is_not_taken_for_a_number() -> None:
    # `network: true` is a bool, which Python counts as an int: it has no range to be in.
    config = config_from_mapping({"checks": [{"name": "a", "run": "x", "network": True}]})
    assert config.checks[0]["network"] is True


def test_the_readme_states_the_ranges_the_table_holds() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for key, said in [
        ("planner.max_context_tokens", "`planner.max_context_tokens` ≤ 10000000"),
        ("sandbox.pids", "`sandbox.pids` ≤ 4194304"),
        ("memory.search.k", "`memory.search.k` and `code.max_results` 1–100"),
        ("code.max_results", "`memory.search.k` and `code.max_results` 1–100"),
        ("api.max_body_bytes", "`api.max_body_bytes` ≤ 64 MiB"),
        ("routing.*.temperature", "`routing.<role>.temperature` 0–2"),
        ("api.port", "a port 1–65535"),
    ]:
        assert said in text, said
        low, high, _, _ = RANGES[key]
        shown = said.replace("64 MiB", str(64 * 1024**2))
        assert f"≤ {int(high)}" in shown or f"{int(low)}–{int(high)}" in shown, key


@pytest.mark.parametrize("value", [0, 1, 2])
def test_a_plan_too_short_for_a_step_toward_its_goal_is_refused(repo: Path, value: int) -> None:
    # A plan opens with the review and ends with the checks: 2 actions left no room for the
    # work itself, and were accepted without a word.
    path = repo / ".nexus" / "config.yaml"
    path.parent.mkdir()
    path.write_text(f"planner:\n  max_actions: {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    message, hint = info.value.message, info.value.hint or ""
    assert f"`planner.max_actions` must be a whole number ≥ 3 and ≤ 100, got {value}" in message
    assert hint.startswith("set `planner.max_actions` to a whole number ≥ 3 and ≤ 100")
    assert "the review, at least one step toward the goal, and the checks" in hint
