"""The repository's own commands, from its code and its build files."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.context.toolchain import PYTHON, detect, fill
from nexusd.planner.pipeline import architect_phase
from tests.conftest import commit_files
from tests.plan_helpers import bundle_for, config, request


@pytest.mark.parametrize(
    ("files", "test", "language"),
    [
        ({"Cargo.toml": "", "src/lib.rs": "", "src/cli.rs": "", "x.py": ""}, "cargo test", "rust"),
        ({"go.mod": "", "a.go": "", "b.go": ""}, "go test ./...", "go"),
        ({"package.json": "{}", "src/index.js": "", "lib/a.ts": ""}, "npm test", "javascript"),
        ({"pom.xml": "", "src/A.java": ""}, "mvn -q test", "java"),
        ({"gradlew": "", "build.gradle": "", "src/A.java": ""}, "./gradlew test", "java"),
        (
            {"CMakeLists.txt": "", "src/a.cc": "", "include/a.h": ""},
            "ctest --test-dir build --output-on-failure",
            "c",
        ),
        ({"Makefile": "all:\ncheck:\n\t./run\n", "src/jv.c": ""}, "make check", "c"),
        ({"Makefile": "all:\n", "src/jv.c": ""}, "make test", "c"),
        # Autotools (jq): no Makefile is tracked, and automake always makes `check`.
        ({"configure.ac": "", "Makefile.am": "", "src/jv.c": ""}, "make check", "c"),
        # A Python project with a package.json for its docs' scripts is Python's.
        (
            {"package.json": "{}", "pkg/a.py": "", "pkg/b.py": "", "doc/x.js": ""},
            "pytest -q",
            "python",
        ),
        ({"Gemfile": "", "lib/a.rb": "", "spec/a_spec.rb": ""}, "bundle exec rspec", "ruby"),
        ({"Gemfile": "", "lib/a.rb": "", "test/a_test.rb": ""}, "bundle exec rake test", "ruby"),
        ({"composer.json": "{}", "src/A.php": "", "src/B.php": ""}, "vendor/bin/phpunit", "php"),
        ({"notes.txt": ""}, "pytest -q", "python"),  # nothing plain: the default
    ],
)
def test_the_language_with_most_code_and_its_build_file_choose(
    repo: Path, files: dict[str, str], test: str, language: str
) -> None:
    chain = detect(commit_files(repo, files))
    assert (chain.test, chain.language) == (test, language)


@pytest.mark.parametrize(
    ("files", "tool"),
    [
        ({"Cargo.toml": "", "src/lib.rs": ""}, "cargo"),
        ({"go.mod": "", "a.go": ""}, "go"),
        ({"package.json": "{}", "src/index.js": ""}, "npm"),
        ({"pom.xml": "", "src/A.java": ""}, "maven"),
        ({"gradlew": "", "src/A.java": ""}, "gradle"),
        ({"build.gradle": "", "src/A.kt": ""}, "gradle"),
        ({"CMakeLists.txt": "", "configure.ac": "", "a.c": ""}, "cmake"),
        ({"configure.ac": "", "a.c": ""}, "autotools"),
        ({"Makefile": "test:\n", "a.c": ""}, "make"),
        ({".rspec": "", "lib/a.rb": ""}, "rspec"),
        ({"Rakefile": "", "lib/tasks/a.rake": "", "lib/a.rb": ""}, "rake"),
        ({"composer.json": "{}", "src/A.php": ""}, "composer"),
        ({"a.py": ""}, "pytest"),
    ],
)
def test_the_build_tool_is_named(repo: Path, files: dict[str, str], tool: str) -> None:
    assert detect(commit_files(repo, files)).tool == tool


def test_python_is_the_default_and_names_pytest() -> None:
    assert (PYTHON.language, PYTHON.tool, PYTHON.test) == ("python", "pytest", "pytest -q")


def test_a_folder_that_is_no_repository_falls_back_to_python(tmp_path: Path) -> None:
    assert detect(tmp_path) == PYTHON


def test_catalog_texts_name_the_repositorys_commands() -> None:
    text = "Profile it ({profile}); then `git bisect run {first_failure}`."
    assert "cargo" not in fill(text, PYTHON) and "python -m cProfile" in fill(text, PYTHON)


def test_a_rust_plan_says_cargo_and_never_pytest(repo: Path) -> None:
    commit_files(repo, {"Cargo.toml": "[package]\nname = 'fd'\n", "src/cli.rs": "fn main() {}\n"})
    req = request(
        goal="The -1 alias does not conflict with --exec: it crashes with an error",
        artifacts=(),
        blockers=(),
        previous_goal=None,
        previous_outcome=None,
    )
    text = "\n".join(s.body for s in architect_phase(bundle_for(repo, req), config()))
    assert "cargo test" in text
    assert "pytest" not in text and "cProfile" not in text and "PYTHONFAULTHANDLER" not in text
