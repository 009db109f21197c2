"""The config `nexusd init` writes for the repository's build tool: its checks example and image.

A Rust crate gets a `cargo test` example and a Rust image, not pytest and the Python image;
a Ruby gem `bundle exec rspec` (or rake's `test`) and a PHP package PHPUnit through Composer.
The build tool comes from above (`nexusd.context.toolchain.detect`, which this floor may not
import), as its name and its test command. Every example runs from a fresh snapshot with
no network: offline flags where the tool has them, and the configure/build steps a C
project's tests need. A check in docker runs on the image's own PATH (cargo in
/usr/local/cargo/bin, go in /usr/local/go/bin).
A Python repository gets the packaged template exactly as it is.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass

from nexusd.templates import template_text


@dataclass(frozen=True)
class Stack:
    """What the scaffolded config says for one build tool."""

    tool: str  # as `Toolchain.tool` names it
    language: str  # for people: "Rust", "C/C++"
    build: str  # the build tool for people: "Cargo"; "" when there is no other (Go)
    image: str  # `sandbox.image`
    run: str  # the example check's command
    when: str  # the example check's `when`, as YAML
    timeout: int  # seconds; the sandbox's 60 s default is far too short to build
    memory: str
    needs: str  # what the image must hold beyond the toolchain (it has no network)
    why: str = ""  # on the example's command
    pids: int | None = None  # JVMs start dozens of threads, and the sandbox counts each


PYTHON_STACK = Stack(
    tool="pytest",
    language="Python",
    build="pytest",
    image="nexusd-python:bookworm",
    run="pytest -q",
    when="[request, commit]",
    timeout=120,
    memory="",
    needs="",
)
# A clean build on every run (the snapshot has no target/ or build/), and a plan waits for
# its `request` checks: compiled projects check on commits only, until builds are quick.
_ON_COMMIT = "[commit]"
_C_IMAGE = "gcc:14"
_C_NEEDS = "the libraries the build links (and its git submodules: snapshots have none)"
_RSPEC = Stack(
    tool="rspec",
    language="Ruby",
    build="Bundler",
    image="ruby:3-slim",
    run="bundle install --local --quiet && bundle exec rspec",
    when="[request, commit]",
    timeout=600,
    memory="1g",
    needs="the gems Gemfile.lock names (in vendor/cache, or installed in the image)",
    why="`bundle install --local` takes the gems from vendor/cache or the image, never a network.",
)
STACKS: dict[str, Stack] = {
    "cargo": Stack(
        tool="cargo",
        language="Rust",
        build="Cargo",
        image="rust:1-slim",
        run="cargo test --offline",
        when=_ON_COMMIT,
        timeout=1800,
        memory="4g",
        needs="the crates Cargo.lock names (a vendor/ folder or the image's CARGO_HOME)",
    ),
    "go": Stack(
        tool="go",
        language="Go",
        build="",
        image="golang:1",
        run="GOPROXY=off go test ./...",
        when=_ON_COMMIT,
        timeout=900,
        memory="2g",
        needs="the modules go.sum names (a vendor/ folder or the image's GOMODCACHE)",
        why="GOPROXY=off fails at once on a missing module instead of waiting for a network.",
    ),
    "npm": Stack(
        tool="npm",
        language="JavaScript/TypeScript",
        build="npm",
        image="node:20-slim",
        run="npm ci --offline && npm test",
        when="[request, commit]",
        timeout=600,
        memory="1g",
        needs="an npm cache with the lockfile's packages (`ENV npm_config_cache=…`)",
        why="node_modules/ is not in the snapshot: `npm ci --offline` installs it from the cache.",
    ),
    "maven": Stack(
        tool="maven",
        language="Java",
        build="Maven",
        image="maven:3-eclipse-temurin-21",
        run="mvn -o -q test",
        when=_ON_COMMIT,
        timeout=900,
        memory="2g",
        needs="a Maven repository with the build's plugins and dependencies (HOME is "
        "/workspace in the sandbox: name it with `ENV MAVEN_OPTS=-Dmaven.repo.local=…`)",
        pids=512,
    ),
    "gradle": Stack(
        tool="gradle",
        language="Java",
        build="Gradle",
        image="gradle:jdk21",
        run="gradle test --offline",
        when=_ON_COMMIT,
        timeout=900,
        memory="2g",
        needs="the dependencies and the wrapper's Gradle distribution (HOME is /workspace "
        "in the sandbox: name them with `ENV GRADLE_USER_HOME=…`)",
        pids=512,
    ),
    "cmake": Stack(
        tool="cmake",
        language="C/C++",
        build="CMake",
        image=_C_IMAGE,
        run="cmake -B build && cmake --build build && ctest --test-dir build --output-on-failure",
        when=_ON_COMMIT,
        timeout=900,
        memory="1g",
        needs="cmake (the gcc image has make, not cmake), " + _C_NEEDS,
        why="The snapshot has no build/ folder: the check configures and builds before ctest.",
    ),
    "autotools": Stack(
        tool="autotools",
        language="C/C++",
        build="autotools",
        image=_C_IMAGE,
        run="autoreconf -fi && ./configure && make check",
        when=_ON_COMMIT,
        timeout=900,
        memory="1g",
        needs=_C_NEEDS,
        why="The snapshot has no generated configure or Makefile: the check makes them first.",
    ),
    "make": Stack(
        tool="make",
        language="C/C++",
        build="make",
        image=_C_IMAGE,
        run="make test",
        when=_ON_COMMIT,
        timeout=600,
        memory="1g",
        needs=_C_NEEDS,
    ),
    "rspec": _RSPEC,
    "rake": dataclasses.replace(
        _RSPEC, tool="rake", run="bundle install --local --quiet && bundle exec rake test"
    ),
    "composer": Stack(
        tool="composer",
        language="PHP",
        build="Composer",
        image="composer:2",
        run="composer install --no-interaction --quiet && vendor/bin/phpunit",
        when="[request, commit]",
        timeout=600,
        memory="1g",
        needs="a Composer cache with the packages composer.lock names (`ENV COMPOSER_CACHE_DIR=…`)",
        why="vendor/ is not in the snapshot: `composer install` makes it from the cache.",
    ),
}
# The tools whose command is the repository's own test command (`./gradlew` or `gradle`;
# `make test` or `make check`), with what the sandbox adds to it.
_FROM_TEST = {"gradle": "{test} --offline", "make": "{test}"}

# What `config_text` replaces in the packaged template; a test keeps both in it.
_PYTHON_EXAMPLE = """\
# Checks run in the sandbox for each request and each commit, e.g.
#   checks:
#     - name: tests
#       run: pytest -q
#       when: [request, commit]   # request, commit or manual
#       timeout: 120              # unset keys inherit from `sandbox:`
checks: []
"""
_PYTHON_IMAGE = "  image: nexusd-python:bookworm\n"


def stack_for(tool: str, test: str) -> Stack:
    """The stack of a build tool (`Toolchain.tool`) and its test command; Python's otherwise."""
    stack = STACKS.get(tool)
    if stack is None:
        return PYTHON_STACK
    if tool in _FROM_TEST:
        return dataclasses.replace(stack, run=_FROM_TEST[tool].replace("{test}", test))
    return stack


def config_text(stack: Stack) -> str:
    """The `.nexus/config.yaml` `init` writes for `stack` (the packaged one for Python)."""
    text = template_text("config")
    if stack == PYTHON_STACK:
        return text
    for anchor in (_PYTHON_EXAMPLE, _PYTHON_IMAGE):
        if text.count(anchor) != 1:  # pragma: no cover - a test keeps the template in step
            raise RuntimeError(f"templates/config.yaml lost the text init replaces: {anchor!r}")
    text = text.replace(_PYTHON_EXAMPLE, _checks_example(stack))
    return text.replace(_PYTHON_IMAGE, _image_lines(stack))


def _checks_example(stack: Stack) -> str:
    intro = (
        "Checks run in the sandbox for each request and each commit. This example is for "
        f"what `nexusd init` found here: {_found(stack)}. {stack.why}"
    )
    # The values' comments start in column 35, as in the packaged template.
    lines = [
        *_comment(intro, "# "),
        "#   checks:",
        "#     - name: tests",
        f"#       run: {stack.run}",
        f"#       when: {stack.when:<20}# request, commit or manual",
    ]
    if stack.when == _ON_COMMIT:
        lines.append(f"#{'':<33}# (a plan waits for its request's checks)")
    lines.append(f"#       timeout: {stack.timeout:<17}# each run starts from a fresh snapshot")
    if stack.pids is not None:
        lines.append(f"#       pids: {stack.pids:<20}# each JVM thread counts as one")
    lines += [
        f"#       memory: {stack.memory:<18}# unset keys inherit from `sandbox:`",
        "checks: []",
    ]
    return "\n".join(lines) + "\n"


def _image_lines(stack: Stack) -> str:
    note = (
        f"An official image for {stack.language}. nexusd never downloads an image: it must "
        f"be in the Docker Engine before a check runs (`docker pull {stack.image}` where "
        "there is a network, or `docker load` of a saved one); `nexusd doctor` says whether "
        "it is. Without it `auto` runs the checks with bubblewrap and this machine's /usr "
        "(other folders through `sandbox.ro_binds`), and says so. Checks have no network "
        f"either, so the image must also hold {stack.needs}: build one FROM this image with "
        ".nexus/Dockerfile and `nexusd sandbox build`, then name its tag here."
    )
    return "\n".join([*_comment(note, "  # "), f"  image: {stack.image}"]) + "\n"


def _found(stack: Stack) -> str:
    built = f", built with {stack.build}" if stack.build else ""
    return f"mostly {stack.language} code{built}"


def _comment(text: str, prefix: str) -> list[str]:
    # A `code span` is never cut in two: its spaces are hard until the lines are made.
    spans = re.sub(r"`[^`]*`", lambda m: m.group().replace(" ", _HARD), text)
    wrapped = textwrap.wrap(
        spans,
        width=92,
        initial_indent=prefix,
        subsequent_indent=prefix,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(_HARD, " ") for line in wrapped]


_HARD = "\x00"
