"""The one configuration loader: layering, validation that names the key, sources."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from nexusd.config import DEFAULTS, config_from_mapping, load_config, user_config_path
from nexusd.errors import ConfigError
from nexusd.templates import template_text
from nexusd.yamlload import MAX_DEPTH
from tests.yaml_nesting import deep_field, too_deep_cases, too_deep_offset


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_files(repo: Path) -> None:
    config = load_config(repo)
    assert dict(config.data) == DEFAULTS
    assert config.sources == {}
    assert config.source("watch.debounce_ms") == "default"
    assert config.get("planner.max_actions") == 8


def test_defaults_are_not_shared_between_loads(repo: Path) -> None:
    first = load_config(repo)
    first.get("watch.paths").append("mutated")
    assert load_config(repo).get("watch.paths") == DEFAULTS["watch"]["paths"]
    assert "mutated" not in DEFAULTS["watch"]["paths"]


def test_repository_file_wins_over_user_file(repo: Path, _isolated_home: Path) -> None:
    user = _write(
        _isolated_home / ".config" / "nexusd" / "config.yaml",
        "watch:\n  debounce_ms: 80\n  rescan_seconds: 5\nplanner:\n  max_actions: 6\n",
    )
    assert user_config_path() == user
    project = _write(repo / ".nexus" / "config.yaml", "planner:\n  max_actions: 4\n")
    config = load_config(repo)
    assert config.get("watch.debounce_ms") == 80
    assert config.get("planner.max_actions") == 4
    assert config.get("watch.queue_size") == DEFAULTS["watch"]["queue_size"]
    assert config.source("watch.debounce_ms") == str(user)
    assert config.source("planner.max_actions") == str(project)
    assert config.source("watch.queue_size") == "default"


def test_explicit_user_file_and_no_root(tmp_path: Path) -> None:
    user = _write(tmp_path / "u.yaml", "daemon:\n  log_level: debug\n")
    config = load_config(None, user_file=user)
    assert config.get("daemon.log_level") == "debug"


def test_packaged_config_template_is_exactly_the_defaults(repo: Path) -> None:
    text = template_text("config")
    assert yaml.safe_load(text) == DEFAULTS, "update nexusd/templates/config.yaml with DEFAULTS"
    _write(repo / ".nexus" / "config.yaml", text)
    assert dict(load_config(repo).data) == DEFAULTS
    # Commented defaults: the file teaches what each section is for.
    assert text.count("#") >= 20


@pytest.mark.parametrize("text", ["", "# only comments\n", "watch:\n  # debounce_ms: 10\n"])
def test_empty_files_and_sections_change_nothing(repo: Path, text: str) -> None:
    _write(repo / ".nexus" / "config.yaml", text)
    assert dict(load_config(repo).data) == DEFAULTS


@pytest.mark.parametrize(
    ("layer", "needle"),
    [
        ({"nope": 1}, "unknown key `nope`"),
        ({"watch": {"debounce": 1}}, "unknown key `watch.debounce`"),
        ({"watch": 5}, "`watch` must be a mapping"),
        ({"watch": {"debounce_ms": "fast"}}, "`watch.debounce_ms` must be a whole number"),
        ({"watch": {"debounce_ms": -1}}, "`watch.debounce_ms` must be a whole number"),
        ({"watch": {"debounce_ms": True}}, "`watch.debounce_ms` must be a whole number"),
        ({"checkpoint": {"on_request": "yes"}}, "`checkpoint.on_request` must be true or false"),
        ({"sandbox": {"cpus": "two"}}, "`sandbox.cpus` must be a number"),
        ({"sandbox": {"image": "  "}}, "`sandbox.image` must be a non-empty string"),
        ({"watch": {"paths": "x"}}, "`watch.paths` must be a list of strings"),
        ({"watch": {"paths": [1]}}, "`watch.paths` must be a list of strings"),
        ({"sandbox": {"backend": "vm"}}, "`sandbox.backend` must be one of auto, bwrap"),
        ({"planner": {"catalog": 3}}, "`planner.catalog` must be a non-empty string"),
        ({"checks": {"name": "x"}}, "`checks` must be a list"),
        ({"checks": ["pytest"]}, "`checks[0]` must be a mapping"),
        ({"checks": [{"name": "t"}]}, "`checks[0].run` is missing"),
        ({"checks": [{"name": "t", "run": "x", "shell": 1}]}, "unknown key `checks[0].shell`"),
        ({"checks": [{"name": "t", "run": "x", "when": "never"}]}, "`checks[0].when`"),
        ({"checks": [{"name": "t", "run": "x", "network": "no"}]}, "`checks[0].network`"),
        (
            {"checks": [{"name": "t", "run": "x", "timeout": True}]},
            "`checks[0].timeout` must be a number of seconds, got True",
        ),
        ({"checks": [{"name": "t", "run": True}]}, "quote what YAML reads as another type"),
        ({"checks": [{"name": "t", "run": "x", "memory": 512}]}, "such as 512m or 2g"),
        ({"checks": [{"name": "t", "run": "x", "env": [1]}]}, "`checks[0].env`"),
        (
            {"checks": [{"name": "t", "run": "x"}, {"name": "t", "run": "y"}]},
            "two checks are named `t`",
        ),
    ],
)
def test_invalid_values_name_the_key_and_the_file(
    repo: Path, layer: dict[str, Any], needle: str
) -> None:
    path = _write(repo / ".nexus" / "config.yaml", yaml.safe_dump(layer))
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert needle in info.value.message
    assert str(path) in info.value.message
    assert info.value.hint
    assert info.value.exit_code == 3


def test_a_check_key_of_the_wrong_type_is_one_problem_not_also_missing(repo: Path) -> None:
    _write(repo / ".nexus" / "config.yaml", "checks:\n  - name: t\n    run: true\n")
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert "`checks[0].run` must be a shell command as text" in info.value.message
    assert "is missing" not in info.value.message
    assert 'run: "true"' in (info.value.hint or "")


def test_every_problem_in_every_file_is_reported_not_only_the_first(
    repo: Path, _isolated_home: Path
) -> None:
    user = _write(_isolated_home / ".config" / "nexusd" / "config.yaml", "watch: [1\n")
    project = _write(
        repo / ".nexus" / "config.yaml",
        "nope: 1\n"
        "watch:\n  debounce_ms: -1\n  bogus: 2\n"
        "checks:\n  - name: unit\n  - run: pytest\n    when: never\n"
        "providers:\n  local:\n    type: openai\n    n_ctx: 0\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(repo)

    needles = [
        f"{user}: not valid YAML",
        f"{project}: unknown key `nope`",
        "`watch.debounce_ms` must be a whole number ≥ 0 and ≤ 31622400000, got -1",
        "unknown key `watch.bogus`",
        "`checks[0].run` is missing",
        "`checks[1].name` is missing",
        "`checks[1].when` must be request, commit or manual",
        "`providers.local.n_ctx` must be a whole number ≥ 1",
    ]
    assert len(info.value.problems) == len(needles)
    assert info.value.message.startswith(f"{len(needles)} problems in the configuration:")
    for needle in needles:
        assert needle in info.value.message
    assert info.value.message.count("fix: ") == len(needles)
    assert info.value.exit_code == 3


@pytest.mark.parametrize(
    ("text", "needle"),
    [("watch: [1\n", "not valid YAML"), ("- a\n- b\n", "top level must be a mapping")],
)
def test_unreadable_files(repo: Path, text: str, needle: str) -> None:
    _write(repo / ".nexus" / "config.yaml", text)
    with pytest.raises(ConfigError, match=needle):
        load_config(repo)


def test_a_file_that_cannot_be_read_is_a_config_error_not_an_os_error(repo: Path) -> None:
    # Reading /proc/self/mem at offset 0 fails with EIO, even for root (chmod would not).
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").symlink_to("/proc/self/mem")
    with pytest.raises(ConfigError, match=r"config\.yaml: cannot be read") as info:
        load_config(repo)
    assert info.value.hint and "readable regular file" in info.value.hint


def test_valid_values_are_normalised() -> None:
    config = config_from_mapping(
        {
            "sandbox": {"cpus": 2},
            "planner": {"catalog": "docs/practices.yaml"},
            "memory": {"search": {"recency_half_life_days": 7}},
            "checks": [{"name": "unit", "run": "pytest -q", "when": "commit"}],
        },
        origin="test",
    )
    assert config.get("sandbox.cpus") == 2.0 and isinstance(config.get("sandbox.cpus"), float)
    assert config.get("planner.catalog") == "docs/practices.yaml"
    assert config.get("memory.search.recency_half_life_days") == 7.0
    assert config.get("checks") == [
        {"name": "unit", "run": "pytest -q", "when": ["commit"], "env": []}
    ]
    assert config.source("checks") == "test"
    assert config.source("memory.search.recency_half_life_days") == "test"


def test_nullable_keys_accept_null() -> None:
    config = config_from_mapping({"planner": {"catalog": None}, "memory": {"index_uri": None}})
    assert config.get("planner.catalog") is None


def test_config_from_mapping_does_not_mutate_input() -> None:
    layer = {"watch": {"debounce_ms": 10}}
    before = copy.deepcopy(layer)
    config_from_mapping(layer)
    assert layer == before


def test_get_unknown_key_raises_key_error() -> None:
    with pytest.raises(KeyError):
        config_from_mapping({}).get("watch.nope")


def test_xdg_default_location(monkeypatch: pytest.MonkeyPatch, _isolated_home: Path) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert user_config_path() == _isolated_home / ".config" / "nexusd" / "config.yaml"


def test_numbers_in_range_still_load(repo: Path) -> None:
    _write(
        repo / ".nexus" / "config.yaml",
        "watch:\n  rescan_seconds: 31622400\napi:\n  port: 65535\nsandbox:\n  cpus: 0.5\n"
        "memory:\n  chunk_max_chars: 1\n"
        "checks:\n- {name: a, run: x, timeout: 0.5, cpus: 2, pids: 64}\n",
    )
    config = load_config(repo)
    assert config.watch.rescan_seconds == 31622400 and config.api.port == 65535


@pytest.mark.parametrize("kind", ["folder", "broken link"])
def test_a_folder_or_broken_link_for_the_file_is_an_error(
    repo: Path, tmp_path: Path, kind: str
) -> None:
    # Both used to be read as "no file": the settings meant for it were left out silently.
    path = repo / ".nexus" / "config.yaml"
    path.parent.mkdir()
    if kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "moved-away.yaml")
    with pytest.raises(ConfigError, match=r"config\.yaml: is .*cannot be read") as info:
        load_config(repo)
    assert info.value.hint and "remove it to use the defaults" in info.value.hint


@pytest.mark.parametrize(
    "text", ["watch:\n  debounce_ms: 2025-02-30\n", "watch:\n  ? !!timestamp x\n  : 1\n"]
)
def test_values_yaml_cannot_build_are_yaml_errors(repo: Path, text: str) -> None:
    _write(repo / ".nexus" / "config.yaml", text)
    with pytest.raises(ConfigError, match=r"not valid YAML .*cannot read the value"):
        load_config(repo)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # A `watch:` added at the top of the file `nexusd init` wrote, which has its own.
        (
            "watch:\n  debounce_ms: 7\nplanner:\n  max_actions: 4\nwatch:\n  settle_ms: 9\n",
            "`watch` is given twice, on lines 1 and 5",
        ),
        ("watch:\n  debounce_ms: 7\n  debounce_ms: 9\n", "`debounce_ms` is given twice"),
        ("checks:\n- {name: a, run: x, run: y}\n", "`run` is given twice, on line 2"),
    ],
)
def test_a_key_given_twice_is_an_error_not_the_last_one_silently(
    repo: Path, text: str, needle: str
) -> None:
    _write(repo / ".nexus" / "config.yaml", text)
    with pytest.raises(ConfigError, match="given twice") as info:
        load_config(repo)
    assert needle in info.value.message
    assert info.value.hint and "merge the two" in info.value.hint


def test_a_merge_key_may_be_overridden(repo: Path) -> None:
    _write(
        repo / ".nexus" / "config.yaml",
        "watch:\n  <<: {debounce_ms: 7, settle_ms: 3}\n  debounce_ms: 9\n",
    )
    config = load_config(repo)
    assert (config.watch.debounce_ms, config.watch.settle_ms) == (9, 3)


@pytest.mark.parametrize(("shape", "levels"), too_deep_cases())
def test_nesting_too_deep_is_a_config_error_not_a_crash(
    repo: Path, shape: str, levels: int
) -> None:
    # 200 levels of mappings were a RecursionError out of load_config (the daemon reloads
    # this file while it runs), 1000 a libyaml error about its own limit.
    text = "planner:\n  max_actions: 4\n" + deep_field(shape, levels, key="watch")
    path = _write(repo / ".nexus" / "config.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    line = 3 + too_deep_offset(shape)
    assert info.value.message == (
        f"{path}: lists and mappings nest deeper than {MAX_DEPTH} levels, on line {line}"
    )
    assert info.value.hint and info.value.hint.startswith("flatten it")
    assert info.value.exit_code == 3


def test_nesting_up_to_the_limit_is_read_as_before(repo: Path) -> None:
    _write(repo / ".nexus" / "config.yaml", deep_field("flow_map", MAX_DEPTH - 1, key="watch"))
    with pytest.raises(ConfigError, match=r"unknown key `watch\.a`"):
        load_config(repo)
