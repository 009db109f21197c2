"""`nexusd sandbox build`: the project's own check image, from `.nexus/Dockerfile`.

The stock image (`nexusd-python:bookworm`) has Python and pytest and none of a
project's dependencies, and nothing said how to add them. A project adds them in
`.nexus/Dockerfile`, built with `.nexus/` as its context, normally `FROM` the
stock image and `COPY`ing what it needs (a wheelhouse installed with
`pip install --no-index --find-links`, vendored packages, apt `.deb`s). The build
runs with no network (`network_mode=none`), so it works offline and never pulls:
the base image must already be in the engine. The tag is the content hash of the
context, so an unchanged `.nexus/` is never rebuilt and the config names an exact
image (`sandbox.image`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexusd.errors import SandboxError
from nexusd.paths import RepoLayout
from nexusd.sandbox import docker_backend

DOCKERFILE = "Dockerfile"
REPOSITORY = "nexusd-project"


@dataclass(frozen=True)
class Built:
    """The image a build produced (or found already built) and its tag."""

    tag: str
    cached: bool


def context_dir(layout: RepoLayout) -> Path:
    """The build context: `.nexus/` of the working tree."""
    return layout.root / ".nexus"


def content_tag(context: Path) -> str:
    """`nexusd-project:<sha256 of every file's path and bytes, 16 hex>` (links never followed)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in context.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(context).as_posix()
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{REPOSITORY}:{digest.hexdigest()[:16]}"


def build_image(
    layout: RepoLayout, *, client: Any = None, progress: Callable[[str], None] | None = None
) -> Built:
    """Build `.nexus/Dockerfile` offline into a content-tagged image, unless it exists."""
    import docker.errors

    context = context_dir(layout)
    if not (context / DOCKERFILE).is_file():
        raise SandboxError(
            f"no {context / DOCKERFILE} to build the check image from",
            hint="write one, e.g. `FROM nexusd-python:bookworm` then COPY and RUN your "
            "dependencies from files under .nexus/ (the build has no network)",
        )
    tag = content_tag(context)
    client = client or docker_backend.connect()
    try:
        client.images.get(tag)
        return Built(tag, cached=True)
    except docker.errors.ImageNotFound:
        pass
    try:
        # pull=False and no network: offline, and only images already in the engine are used.
        for chunk in client.api.build(
            path=str(context),
            dockerfile=DOCKERFILE,
            tag=tag,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="none",
            decode=True,
        ):
            if "error" in chunk:
                raise SandboxError(
                    f"building {context / DOCKERFILE} failed: {chunk['error'].strip()}",
                    hint="the build has no network: COPY files under .nexus/ instead of "
                    "downloading, and base it on an image the engine has (`docker images`)",
                )
            if progress is not None and chunk.get("stream", "").strip():
                progress(chunk["stream"].rstrip())
    except docker.errors.DockerException as exc:
        raise SandboxError(
            f"the Docker Engine could not build {context / DOCKERFILE}: {exc}",
            hint=docker_backend.SETUP_HINT,
        ) from exc
    return Built(tag, cached=False)
