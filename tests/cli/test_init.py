"""`nexusd init` and the templates it writes, in real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.config import DEFAULTS, load_config
from nexusd.context.gitfacts import collect_git_facts
from nexusd.paths import find_repo
from nexusd.protocol.naming import is_request_file
from nexusd.protocol.parse import parse_request
from nexusd.templates import TEMPLATES, daily_note, template_text
from nexusd.templates.scaffold import own_files

SCAFFOLD = [
    ".nexus/config.yaml",
    ".scratchpad_logs",
    ".scratchpad_logs/README.md",
    ".scratchpad_logs/TEMPLATE_plan_request.md.example",
    "MEMORY.md",
    "memory/daily",
    "memory/daily/.gitkeep",
]


def _init(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["init", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_init_scaffolds_everything(repo: Path) -> None:
    code, out, _ = _init("-C", str(repo), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["created"] == SCAFFOLD
    assert report["kept"] == []
    for rel in SCAFFOLD:
        assert (repo / rel).exists(), rel
    assert (repo / ".nexus/config.yaml").read_text() == template_text("config")
    assert oct((repo / "MEMORY.md").stat().st_mode & 0o777) == "0o644"
    # The scaffolded config is the defaults, and every value now comes from the file.
    config = load_config(repo)
    assert dict(config.data) == DEFAULTS
    assert config.source("watch.debounce_ms") == str(repo / ".nexus" / "config.yaml")


def test_what_init_writes_is_nexusd_own(repo: Path) -> None:
    assert _init("-C", str(repo))[0] == 0
    config = load_config(repo)
    own = own_files(find_repo(repo), config)
    assert set(SCAFFOLD) <= set(own)
    assert collect_git_facts(repo, own=own).dirty == ()
    assert collect_git_facts(repo, own=()).dirty_total == 4  # .nexus/, .scratchpad_logs/, …


def test_init_is_idempotent_and_never_overwrites(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    (repo / "MEMORY.md").write_text("# my own memory\n")
    code, out, _ = _init()
    assert code == 0
    assert "created  .nexus/config.yaml" in out
    assert "kept     MEMORY.md" in out
    assert (repo / "MEMORY.md").read_text() == "# my own memory\n"
    (repo / ".nexus/config.yaml").write_text("watch:\n  debounce_ms: 5\n")
    code, out, _ = _init("--json")
    report = json.loads(out)
    assert report["created"] == []
    assert sorted(report["kept"]) == sorted(SCAFFOLD)
    assert (repo / ".nexus/config.yaml").read_text() == "watch:\n  debounce_ms: 5\n"
    leftovers = list(repo.rglob(".*.tmp"))
    assert leftovers == []


def test_init_from_a_subfolder_uses_the_repository_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(repo / "src" / "deep")
    assert _init()[0] == 0
    assert (repo / "MEMORY.md").is_file()
    assert not (repo / "src" / "deep" / "MEMORY.md").exists()


def test_init_outside_a_repository_says_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    monkeypatch.chdir(outside)
    code, _, err = _init()
    assert code == 5
    assert "not inside a git repository" in err
    assert "git init" in err
    assert list(outside.iterdir()) == []


def test_request_template_is_not_a_request_but_parses_as_one() -> None:
    assert not is_request_file("TEMPLATE_plan_request.md.example")
    request = parse_request(template_text("request"), "TEMPLATE_plan_request.md.example")
    assert request.form == "frontmatter"
    assert request.goal
    assert request.cycle == 1


def test_memory_template_headings() -> None:
    headings = [line[3:] for line in template_text("memory").splitlines() if line.startswith("## ")]
    assert headings == ["Lessons", "Decisions", "Preferences"]


def test_daily_note_template() -> None:
    note = daily_note("2025-05-08")
    assert note.startswith("# 2025-05-08\n")
    assert "{date}" not in note


def test_scratchpad_readme_teaches_the_protocol() -> None:
    readme = template_text("scratchpad_readme")
    for needle in (
        "PROTOCOL.md",
        "_plan_request.md",
        "_plan_response.md",
        "history_path",
        "nexusd plan",
    ):
        assert needle in readme


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_is_packaged(name: str) -> None:
    assert template_text(name).strip()


def test_unknown_template() -> None:
    with pytest.raises(KeyError):
        template_text("nope")
