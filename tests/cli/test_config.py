"""`nexusd config show`: merged values and where each came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.cli.config import flatten


def _show(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["config", "show", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def layered(repo: Path, _isolated_home: Path) -> Path:
    user = _isolated_home / ".config" / "nexusd"
    user.mkdir(parents=True)
    (user / "config.yaml").write_text("watch:\n  debounce_ms: 80\nplanner:\n  max_actions: 6\n")
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text("planner:\n  max_actions: 5\n")
    return repo


def test_show_json_values_and_sources(layered: Path, _isolated_home: Path) -> None:
    code, out, _ = _show("-C", str(layered), "--json")
    assert code == 0
    data = json.loads(out)
    user_file = str(_isolated_home / ".config" / "nexusd" / "config.yaml")
    assert data["watch.debounce_ms"] == {"value": 80, "source": user_file}
    assert data["planner.max_actions"] == {
        "value": 5,
        "source": str(layered / ".nexus" / "config.yaml"),
    }
    assert data["watch.paths"] == {
        "value": [".scratchpad_logs", ".scratchpad"],
        "source": "default",
    }
    assert data["checks"] == {"value": [], "source": "default"}


def test_show_text(layered: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(layered)
    code, out, _ = _show()
    assert code == 0
    lines = {line.split(" = ")[0].strip(): line for line in out.splitlines() if " = " in line}
    assert lines["planner.max_actions"].endswith(f"# {layered / '.nexus' / 'config.yaml'}")
    assert "= 5" in lines["planner.max_actions"]
    assert lines["sandbox.backend"].endswith('"auto"  # default')


def test_show_outside_a_repository_shows_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _show("--json")
    assert code == 0
    assert json.loads(out)["planner.provider"] == {"value": "offline", "source": "default"}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("nope: 1\n", "unknown key `nope`"),
        ("watch:\n  debounce_ms: fast\n", "`watch.debounce_ms` must be"),
        ("watch: [1\n", "not valid YAML"),
    ],
)
def test_bad_config_names_the_key_and_exits_3(repo: Path, content: str, needle: str) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(content)
    code, _, err = _show("-C", str(repo))
    assert code == 3
    assert needle in err
    assert "fix:" in err


def test_flatten() -> None:
    data = {"a": {"b": 1, "c": {}}, "d": [1, 2]}
    assert list(flatten(data)) == [("a.b", 1), ("a.c", {}), ("d", [1, 2])]


def test_show_one_key_or_section(layered: Path) -> None:
    code, out, _ = _show("planner.max_actions", "-C", str(layered), "--json")
    assert code == 0
    assert json.loads(out) == {
        "planner.max_actions": {"value": 5, "source": str(layered / ".nexus" / "config.yaml")}
    }
    code, out, _ = _show("memory.search", "-C", str(layered), "--json")
    assert code == 0 and set(json.loads(out)) >= {"memory.search.k", "memory.search.mode"}
    assert all(k.startswith("memory.search.") for k in json.loads(out))


def test_show_an_unknown_key_suggests_the_closest(layered: Path) -> None:
    result = CliRunner().invoke(cli, ["config", "show", "watch.debounce", "-C", str(layered)])
    assert result.exit_code == 2
    assert "no setting 'watch.debounce'" in result.output
    assert "did you mean watch.debounce_ms" in result.output
