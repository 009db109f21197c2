"""`nexusd sandbox build`: build the project's check image from `.nexus/Dockerfile`."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, repo_option


@click.group()
def sandbox() -> None:
    """Prepare the sandbox the checks run in."""


@sandbox.command()
@click.option("--json", "as_json", is_flag=True, help="Print the tag as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the build's output.")
@repo_option
def build(as_json: bool, quiet: bool, repo: Path | None) -> None:
    """Build .nexus/Dockerfile (context .nexus/) offline into a content-tagged image.

    \b
    Put your dependencies in the image: e.g. `FROM nexusd-python:bookworm`,
    `COPY wheels/ /wheels/`, `RUN pip install --no-index --find-links /wheels -r
    /wheels/requirements.txt`. The build has no network and never pulls. The tag
    is a hash of what is sent to the build (.nexus/ without config.yaml and what
    .nexus/.dockerignore excludes): unchanged files are not rebuilt. Name the tag
    in .nexus/config.yaml as `sandbox.image`; that does not change the tag.
    """
    from nexusd.paths import find_repo
    from nexusd.sandbox.build import build_image

    show = None if quiet or as_json else (lambda line: click.echo(line, err=True))
    built = build_image(find_repo(repo), progress=show)
    if as_json:
        echo_json({"image": built.tag, "cached": built.cached})
        return
    click.echo(f"{'up to date' if built.cached else 'built'}: {built.tag}")
    click.echo(f"use it: set `sandbox.image: {built.tag}` in .nexus/config.yaml")
