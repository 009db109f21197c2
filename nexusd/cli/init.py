"""`nexusd init`: scaffold nexusd's files in this repository."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, repo_option, warn_config_problem
from nexusd.config import load_config
from nexusd.errors import ConfigError
from nexusd.paths import find_repo
from nexusd.templates.scaffold import scaffold
from nexusd.templates.stacks import PYTHON_STACK, Stack, stack_for


@click.command("init")
@repo_option
@click.option(
    "--json", "as_json", is_flag=True, help="Print what was created and kept, and the toolchain."
)
def init(repo: Path | None, as_json: bool) -> None:
    """Scaffold nexusd's files in this repository; safe to run again.

    \b
    Creates what is missing, never overwrites (an existing file is listed as kept):
      .nexus/config.yaml            commented defaults (see `nexusd config show`)
      .scratchpad_logs/README.md    how the request/response folder works
      .scratchpad_logs/TEMPLATE_plan_request.md.example
                                    copy to <timestamp>_plan_request.md to ask for a plan
      MEMORY.md                     lessons, decisions, preferences
      memory/daily/                 daily notes

    \b
    The config fits the language most tracked code is in, and the build
    files at the root: its commented-out example check and sandbox.image are
      Python                 pytest -q                     nexusd-python:bookworm
      Rust                   cargo test --offline          rust:1-slim
      Go                     go test ./...                 golang:1
      JavaScript/TypeScript  npm ci --offline && npm test  node:20-slim
      Java                   mvn -o -q test                maven:3-eclipse-temurin-21
                             gradle test --offline         gradle:jdk21
      C/C++                  ctest, make check, make test  gcc:14
      Ruby                   bundle exec rspec (or rake)   ruby:3-slim
      PHP                    vendor/bin/phpunit            composer:2
    Checks have no network, and nexusd never downloads an image: pull or
    load it into Docker first, with what the build needs (`nexusd doctor`
    says whether it is there; `nexusd sandbox build` builds your own).

    \b
    Examples:
      nexusd init
      nexusd init -C ~/src/tokio --json

    Run it inside a git repository (or pass -C PATH).
    """
    from nexusd.context.toolchain import detect

    layout = find_repo(repo)
    chain = detect(layout.root)
    stack = stack_for(chain.tool, chain.test)
    report = scaffold(layout, stack)
    config_rel = layout.config_file.relative_to(layout.root).as_posix()
    kept_config = config_rel in report.kept
    problem, image = None, None
    if kept_config:
        try:
            image = load_config(layout.root).sandbox.image
        except ConfigError as exc:
            problem = exc  # said as a warning, with every problem
    notes = _notes(stack, config_rel, kept=kept_config, image=image)
    if as_json:
        toolchain = {
            "language": chain.language,
            "tool": stack.tool,
            "check": stack.run,
            "image": stack.image,
        }
        echo_json(
            {
                "root": str(layout.root),
                "created": report.created,
                "kept": report.kept,
                "toolchain": toolchain,
                "notes": notes,
            }
        )
        warn_config_problem(problem)
        return
    for rel in report.created:
        click.echo(f"created  {rel}")
    for rel in report.kept:
        click.echo(f"kept     {rel}")
    for line in notes:
        click.echo(line)
    warn_config_problem(problem)
    click.echo(
        f"nexusd is set up in {layout.root}: next, `nexusd start`, then write a request "
        "with `nexusd request new --goal TEXT`."
    )


def _notes(stack: Stack, config_rel: str, *, kept: bool, image: str | None) -> list[str]:
    """What the config says for a language other than Python, or why a kept one does not
    (`image`: the kept config's sandbox.image, None when it does not load)."""
    if stack == PYTHON_STACK:
        return []  # Python's config and output are what they always were
    found = f"{stack.language} ({stack.build})" if stack.build else stack.language
    if not kept:
        return [
            f"checks   example for {found}, commented out in {config_rel}: {stack.run}",
            f"image    {stack.image}: nexusd never downloads it; pull or load it into Docker "
            "first, with what the build needs (`nexusd doctor` says whether it is there)",
        ]
    if image != PYTHON_STACK.image:
        return []  # the user chose an image (theirs to keep), or the config does not load
    return [
        f"note     {config_rel} was kept as it is, and its sandbox.image is {image}, for "
        f"Python, while the code here is mostly {found}. Set sandbox.image to {stack.image} "
        f"(or your own build of it) and a check running `{stack.run}`; or move the file "
        "aside and run `nexusd init` again for that example, then carry your edits over."
    ]
