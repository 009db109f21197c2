"""`nexusd sandbox build`: the project's own check image, from `.nexus/Dockerfile`.

The stock image (`nexusd-python:bookworm`) has Python and pytest and none of a
project's dependencies, and nothing said how to add them. A project adds them in
`.nexus/Dockerfile`, built with `.nexus/` as its context, normally `FROM` the
stock image and `COPY`ing what it needs (a wheelhouse installed with
`pip install --no-index --find-links`, vendored packages, apt `.deb`s). The build
runs with no network (`network_mode=none`), so it works offline and never pulls:
the base image must already be in the engine. The tag is the content hash of the
context (paths, modes, bytes, link targets), so an unchanged `.nexus/` is never
rebuilt and the config names an exact image (`sandbox.image`). nexusd's own
`config.yaml` is neither sent nor hashed: naming the tag in it, as the command
advises, must not change the tag.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexusd.errors import SandboxError
from nexusd.paths import RepoLayout
from nexusd.sandbox import docker_backend

DOCKERFILE = "Dockerfile"
REPOSITORY = "nexusd-project"
# nexusd's configuration, which names the built tag: never part of the image or its tag.
NEXUSD_FILES = ("config.yaml",)


@dataclass(frozen=True)
class Built:
    """The image a build produced (or found already built) and its tag."""

    tag: str
    cached: bool


def context_dir(layout: RepoLayout) -> Path:
    """The build context: `.nexus/` of the working tree."""
    return layout.root / ".nexus"


def exclusions(context: Path) -> list[str]:
    """The `.dockerignore` patterns of `context`, then nexusd's own files (these win)."""
    patterns: list[str] = []
    with_ignore = context / ".dockerignore"
    if with_ignore.is_file():
        lines = with_ignore.read_text(encoding="utf-8").splitlines()
        # As the Docker SDK reads it when building from a folder.
        patterns = [line.strip() for line in lines if line.strip() and line.strip()[0] != "#"]
    return [*patterns, *NEXUSD_FILES]


def context_files(context: Path) -> list[str]:
    """The paths (relative, sorted) the build sends: `.dockerignore` and nexusd's files left out."""
    from docker.utils.build import exclude_paths

    return sorted(exclude_paths(str(context), exclusions(context), dockerfile=DOCKERFILE))


def content_tag(context: Path) -> str:
    """`nexusd-project:<16 hex of the sha256 of what the build sends>`: paths, modes, bytes."""
    digest = hashlib.sha256()
    for rel in context_files(context):
        path = context / rel
        st = path.lstat()
        # The mode counts: a script made executable behaves differently in the image.
        head = f"{rel}\0{stat.S_IFMT(st.st_mode):o}\0{stat.S_IMODE(st.st_mode):o}\0"
        digest.update(head.encode("utf-8", "surrogateescape"))
        if stat.S_ISLNK(st.st_mode):
            digest.update(os.fsencode(path.readlink()))  # sent as a link, never followed
        elif stat.S_ISREG(st.st_mode):
            digest.update(path.read_bytes())
        digest.update(b"\0")
    return f"{REPOSITORY}:{digest.hexdigest()[:16]}"


def build_image(
    layout: RepoLayout, *, client: Any = None, progress: Callable[[str], None] | None = None
) -> Built:
    """Build `.nexus/Dockerfile` offline into a content-tagged image, unless it exists."""
    import docker.errors
    from docker.utils.build import tar

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
    # The context is packed here, without nexusd's files, so the image is built from
    # exactly what the tag hashes.
    archive = tar(str(context), exclude=exclusions(context), dockerfile=(DOCKERFILE, None))
    try:
        # pull=False and no network: offline, and only images already in the engine are used.
        for chunk in client.api.build(
            fileobj=archive,
            custom_context=True,
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
    finally:
        archive.close()
    return Built(tag, cached=False)
