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
from tests.conftest import commit_files

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


@pytest.mark.parametrize(
    ("files", "run", "image"),
    [
        (
            {"Cargo.toml": "[package]\nname = 'x'\n", "src/lib.rs": "", "src/a.rs": ""},
            "cargo test --offline",
            "rust:1-slim",
        ),
        (
            {"go.mod": "module x\n", "a.go": "package x\n"},
            "GOPROXY=off go test ./...",
            "golang:1",
        ),
        (
            {"package.json": "{}", "src/index.js": ""},
            "npm ci --offline && npm test",
            "node:20-slim",
        ),
        ({"pom.xml": "", "src/A.java": ""}, "mvn -o -q test", "maven:3-eclipse-temurin-21"),
        ({"gradlew": "", "src/A.java": ""}, "./gradlew test --offline", "gradle:jdk21"),
        (
            {"configure.ac": "", "Makefile.am": "", "src/jv.c": ""},
            "autoreconf -fi && ./configure && make check",
            "gcc:14",
        ),
        ({"Makefile": "check:\n\t./t\n", "a.c": ""}, "make check", "gcc:14"),
    ],
)
def test_init_writes_the_config_of_the_repositorys_toolchain(
    repo: Path, files: dict[str, str], run: str, image: str
) -> None:
    commit_files(repo, files)
    code, out, _ = _init("-C", str(repo))
    assert code == 0
    text = (repo / ".nexus/config.yaml").read_text()
    assert f"#       run: {run}\n" in text
    assert f"  image: {image}\n" in text
    assert "pytest" not in text and "nexusd-python" not in text
    assert load_config(repo).sandbox.image == image  # the file validates
    # What it wrote, and that the image is the user's to fetch, is said on the spot.
    assert f"image    {image}" in out and run in out
    assert "never downloads" in out and "nexusd doctor" in out


def test_a_python_repository_gets_todays_config_and_output(repo: Path) -> None:
    commit_files(repo, {"pkg/__init__.py": "", "pkg/a.py": "", "tests/test_a.py": ""})
    code, out, _ = _init("-C", str(repo))
    assert code == 0
    assert (repo / ".nexus/config.yaml").read_text() == template_text("config")
    assert "image " not in out and "checks " not in out


def test_init_json_names_the_toolchain(repo: Path) -> None:
    commit_files(repo, {"Cargo.toml": "", "src/lib.rs": ""})
    report = json.loads(_init("-C", str(repo), "--json")[1])
    assert report["toolchain"] == {
        "language": "rust",
        "tool": "cargo",
        "check": "cargo test --offline",
        "image": "rust:1-slim",
    }
    assert report["created"] == SCAFFOLD


def test_rerun_keeps_an_old_python_config_and_says_what_fits(repo: Path) -> None:
    commit_files(repo, {"Cargo.toml": "", "src/lib.rs": ""})
    old = template_text("config")  # what init wrote everywhere before it read the language
    (repo / ".nexus").mkdir()
    (repo / ".nexus/config.yaml").write_text(old)
    code, out, err = _init("-C", str(repo))
    assert code == 0
    assert (repo / ".nexus/config.yaml").read_text() == old
    assert "kept     .nexus/config.yaml" in out
    assert "nexusd-python:bookworm" in out and "rust:1-slim" in out
    assert "run `nexusd init` again" in out
    assert err == ""


def test_rerun_after_the_user_set_the_image_says_nothing_more(repo: Path) -> None:
    commit_files(repo, {"Cargo.toml": "", "src/lib.rs": ""})
    (repo / ".nexus").mkdir()
    (repo / ".nexus/config.yaml").write_text("sandbox:\n  image: my-rust:1\n")
    code, out, err = _init("-C", str(repo))
    assert code == 0
    assert "image" not in out and err == ""
    assert (repo / ".nexus/config.yaml").read_text() == "sandbox:\n  image: my-rust:1\n"


def test_rerun_warns_when_the_kept_config_does_not_load(repo: Path) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus/config.yaml").write_text("sandbox:\n  imag: typo\n")
    code, out, err = _init("-C", str(repo))
    assert code == 0  # init did its part; the file is the user's to fix
    assert "kept     .nexus/config.yaml" in out
    assert "sandbox.imag" in err and "invalid" in err


def test_help_says_the_config_follows_the_language() -> None:
    result = CliRunner().invoke(cli, ["init", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for needle in ("cargo test", "go test", "npm test", "never overwrites", "-C PATH", "--json"):
        assert needle in text, needle
