"""The config `nexusd init` writes for each build tool: its checks example and sandbox image."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from nexusd.config import DEFAULTS, load_config
from nexusd.templates import template_text
from nexusd.templates.stacks import PYTHON_STACK, STACKS, config_text, stack_for

TOOLS = sorted(STACKS)


def _example_checks(text: str) -> str:
    """The commented `checks:` example of a config, uncommented (as a user would)."""
    lines = text.splitlines()
    start = lines.index("#   checks:")
    end = lines.index("checks: []")
    block = [line.split("  # ", 1)[0][1:] for line in lines[start:end] if line.startswith("#  ")]
    return textwrap.dedent("\n".join(block)) + "\n"


def _write_config(repo: Path, text: str) -> None:
    (repo / ".nexus").mkdir(exist_ok=True)
    (repo / ".nexus" / "config.yaml").write_text(text, encoding="utf-8")


def test_python_gets_exactly_the_packaged_template() -> None:
    assert config_text(PYTHON_STACK) == template_text("config")
    assert stack_for("pytest", "pytest -q") is PYTHON_STACK
    assert stack_for("something new", "x") is PYTHON_STACK


@pytest.mark.parametrize("tool", TOOLS)
def test_each_config_loads_and_differs_from_the_defaults_only_in_the_image(
    repo: Path, tool: str
) -> None:
    stack = STACKS[tool]
    text = config_text(stack)
    _write_config(repo, text)
    config = load_config(repo)  # unknown keys and bad values are errors
    assert config.sandbox.image == stack.image
    expected = {**DEFAULTS, "sandbox": {**DEFAULTS["sandbox"], "image": stack.image}}
    assert dict(config.data) == expected
    assert "nexusd-python" not in text and "pytest" not in text


@pytest.mark.parametrize("tool", TOOLS)
def test_the_uncommented_example_check_is_a_valid_check(repo: Path, tool: str) -> None:
    stack = STACKS[tool]
    text = config_text(stack)
    example = _example_checks(text)
    assert yaml.safe_load(example)["checks"][0]["run"] == stack.run
    _write_config(repo, text.replace("checks: []\n", example))
    (check,) = load_config(repo).checks
    assert (check["name"], check["run"]) == ("tests", stack.run)
    assert check["when"] == yaml.safe_load(stack.when)
    assert check["timeout"] > DEFAULTS["sandbox"]["timeout"]


def test_the_python_example_check_is_the_one_of_today(repo: Path) -> None:
    example = _example_checks(template_text("config"))
    _write_config(repo, template_text("config").replace("checks: []\n", example))
    assert load_config(repo).checks[0]["run"] == "pytest -q"


@pytest.mark.parametrize("tool", TOOLS)
def test_the_image_comment_says_it_is_never_downloaded_and_how_to_get_it(tool: str) -> None:
    stack = STACKS[tool]
    text = config_text(stack)
    sandbox = text[text.index("\nsandbox:\n") : text.index(f"  image: {stack.image}\n")]
    flat = " ".join(line.strip(" #") for line in sandbox.splitlines())
    assert "never downloads" in flat
    assert f"docker pull {stack.image}" in flat and "docker load" in flat
    assert "nexusd doctor" in flat and "nexusd sandbox build" in flat
    assert "no network" in flat


@pytest.mark.parametrize(
    ("tool", "test", "run", "image"),
    [
        (
            "cargo",
            "cargo test",
            "cargo test --offline",
            "rust:1-slim",
        ),
        (
            "go",
            "go test ./...",
            "GOPROXY=off go test ./...",
            "golang:1",
        ),
        ("npm", "npm test", "npm ci --offline && npm test", "node:20-slim"),
        ("maven", "mvn -q test", "mvn -o -q test", "maven:3-eclipse-temurin-21"),
        ("gradle", "./gradlew test", "./gradlew test --offline", "gradle:jdk21"),
        ("gradle", "gradle test", "gradle test --offline", "gradle:jdk21"),
        (
            "cmake",
            "ctest --test-dir build --output-on-failure",
            "cmake -B build && cmake --build build && ctest --test-dir build --output-on-failure",
            "gcc:14",
        ),
        ("autotools", "make check", "autoreconf -fi && ./configure && make check", "gcc:14"),
        ("make", "make test", "make test", "gcc:14"),
        ("make", "make check", "make check", "gcc:14"),
        (
            "rspec",
            "bundle exec rspec",
            "bundle install --local --quiet && bundle exec rspec",
            "ruby:3-slim",
        ),
        (
            "rake",
            "bundle exec rake test",
            "bundle install --local --quiet && bundle exec rake test",
            "ruby:3-slim",
        ),
        (
            "composer",
            "vendor/bin/phpunit",
            "composer install --no-interaction --quiet && vendor/bin/phpunit",
            "composer:2",
        ),
    ],
)
def test_commands_run_offline_from_a_fresh_snapshot(
    tool: str, test: str, run: str, image: str
) -> None:
    stack = stack_for(tool, test)
    assert (stack.run, stack.image) == (run, image)
    assert f"run: {run}\n" in config_text(stack)


def test_every_line_fits_the_file() -> None:
    for stack in (*STACKS.values(), stack_for("gradle", "./gradlew test")):
        long = [line for line in config_text(stack).splitlines() if len(line) > 100]
        assert long == [], stack.tool
