"""`nexusd sandbox build`: the project's dependencies in its check image, offline, by content."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from nexusd.config import load_config
from nexusd.paths import find_repo
from nexusd.sandbox.build import content_tag
from nexusd.sandbox.runner import run_checks
from tests.daemon.helpers import nexusd
from tests.sandbox.conftest import IMAGE

pytestmark = pytest.mark.docker
DOCKERFILE = f"FROM {IMAGE}\nCOPY vendor/ /opt/vendor/\nENV PYTHONPATH=/opt/vendor\n"


def _project(repo: Path, image: str = IMAGE, dockerfile: str = DOCKERFILE) -> None:
    """A project whose check imports a dependency the stock image does not have."""
    vendor = repo / ".nexus" / "vendor" / "nxdep"
    vendor.mkdir(parents=True)
    (vendor / "__init__.py").write_text("ANSWER = 42\n", encoding="utf-8")
    (repo / ".nexus" / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    (repo / ".nexus" / "config.yaml").write_text(
        f"sandbox:\n  backend: docker\n  image: {image}\n"
        "checks:\n  - name: deps\n    run: python3 -c 'import nxdep; print(nxdep.ANSWER)'\n",
        encoding="utf-8",
    )


@pytest.fixture
def built_tags(docker_client: Any) -> Any:
    """Tags made by a test, removed from the engine afterwards."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        with contextlib.suppress(Exception):
            docker_client.images.remove(tag, force=True)


def test_built_image_has_the_dependency_and_is_cached(repo: Path, built_tags: list[str]) -> None:
    _project(repo)
    (stock,) = run_checks(find_repo(repo), load_config(repo))
    assert stock.status == "failed" and "No module named 'nxdep'" in stock.stderr

    first = json.loads(nexusd(repo, "sandbox", "build", "--json", timeout=300).stdout)
    built_tags.append(first["image"])
    assert first["image"].startswith("nexusd-project:") and first["cached"] is False
    again = json.loads(nexusd(repo, "sandbox", "build", "--json").stdout)
    assert again == {"image": first["image"], "cached": True}

    _project_config = (repo / ".nexus" / "config.yaml").read_text(encoding="utf-8")
    (repo / ".nexus" / "config.yaml").write_text(
        _project_config.replace(f"image: {IMAGE}", f"image: {first['image']}"), encoding="utf-8"
    )
    (result,) = run_checks(find_repo(repo), load_config(repo))
    assert (result.status, result.stdout.strip()) == ("passed", "42"), result.stderr
    # A changed .nexus/ is a new image: the tag follows the content.
    (repo / ".nexus" / "vendor" / "nxdep" / "__init__.py").write_text("ANSWER = 7\n")
    changed = json.loads(nexusd(repo, "sandbox", "build", "--json", timeout=300).stdout)
    built_tags.append(changed["image"])
    assert changed["image"] != first["image"] and changed["cached"] is False


def test_build_never_pulls_and_says_how_to_fix_it(repo: Path, docker_client: Any) -> None:
    _project(repo, dockerfile="FROM nexusd-absent-base:never\n")
    proc = nexusd(repo, "sandbox", "build", check=False, timeout=120)
    assert proc.returncode == 6, proc.stdout + proc.stderr
    assert "nexusd-absent-base" in proc.stderr and "no network" in proc.stderr


def test_build_without_a_dockerfile_says_what_to_write(repo: Path) -> None:
    proc = nexusd(repo, "sandbox", "build", check=False)
    assert proc.returncode == 6 and "FROM nexusd-python:bookworm" in proc.stderr, proc.stderr


def test_tag_leaves_out_the_config_and_counts_file_modes(tmp_path: Path) -> None:
    context = tmp_path / ".nexus"
    (context / "bin").mkdir(parents=True)
    (context / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    script = context / "bin" / "setup.sh"
    script.write_text("echo setup\n", encoding="utf-8")
    script.chmod(0o644)
    (context / "config.yaml").write_text(f"sandbox:\n  image: {IMAGE}\n", encoding="utf-8")
    tag = content_tag(context)
    (context / "config.yaml").write_text(f"sandbox:\n  image: {tag}\n", encoding="utf-8")
    assert content_tag(context) == tag
    script.chmod(0o755)
    assert content_tag(context) != tag


def test_naming_the_tag_in_the_config_keeps_the_image_cached(
    repo: Path, built_tags: list[str]
) -> None:
    _project(repo)
    first = json.loads(nexusd(repo, "sandbox", "build", "--json", timeout=300).stdout)
    built_tags.append(first["image"])
    config = repo / ".nexus" / "config.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(f"image: {IMAGE}", f"image: {first['image']}"), "utf-8")
    again = json.loads(nexusd(repo, "sandbox", "build", "--json").stdout)
    assert again == {"image": first["image"], "cached": True}
    # The configuration is not in the image either: the tag names exactly what was sent.
    (result,) = run_checks(find_repo(repo), load_config(repo))
    assert (result.status, result.stdout.strip()) == ("passed", "42"), result.stderr


def test_a_check_finds_the_tools_the_images_own_path_names(
    repo: Path, built_tags: list[str]
) -> None:
    # Official images put their tools on PATH with ENV (rust: /usr/local/cargo/bin); a check
    # that replaced PATH with the system folders could not find them.
    tool = repo / ".nexus" / "bin" / "nxtool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool-found\n", encoding="utf-8")
    tool.chmod(0o755)
    (repo / ".nexus" / "Dockerfile").write_text(
        f"FROM {IMAGE}\nCOPY bin/ /opt/nxtool/bin/\nENV PATH=/opt/nxtool/bin:$PATH\n",
        encoding="utf-8",
    )
    built = json.loads(nexusd(repo, "sandbox", "build", "--json", timeout=300).stdout)
    built_tags.append(built["image"])
    (repo / ".nexus" / "config.yaml").write_text(
        f"sandbox:\n  backend: docker\n  image: {built['image']}\n"
        "checks:\n  - name: tool\n    run: nxtool\n",
        encoding="utf-8",
    )
    (result,) = run_checks(find_repo(repo), load_config(repo))
    assert (result.status, result.stdout.strip()) == ("passed", "tool-found"), result.stderr
