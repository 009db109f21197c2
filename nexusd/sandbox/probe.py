"""What isolation this machine offers, which backend `auto` picks, and how to get better."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nexusd.config import Config
from nexusd.config.defaults import DEFAULTS
from nexusd.errors import SandboxError
from nexusd.sandbox import bwrap_backend, docker_backend
from nexusd.sandbox.build import REPOSITORY

SETUP = 'bash "$(nexusd doctor --setup-script)"'  # the script ships in the package
STOCK_IMAGE = DEFAULTS["sandbox"]["image"]  # what the setup script builds
FALLBACK_PREFIX = "sandbox.backend is auto and checks ran on"


@dataclass(frozen=True)
class Capability:
    """One thing doctor checks: is it there, what was seen, the command that fixes it."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


# Each backend by name, and whether it isolates a check (only the plain subprocess does not).
ISOLATED: Mapping[str, bool] = MappingProxyType(
    {"docker": True, "bwrap": True, "subprocess": False}
)


@dataclass(frozen=True)
class Choice:
    """The backend a run will use and why (fallbacks say what was missing)."""

    backend: str
    reason: str
    client: Any = field(default=None, compare=False, repr=False)
    # Set when `auto` could not use docker: said in every result, response and status.
    fallback: str = ""


def docker_status(images: list[str]) -> tuple[list[Capability], Any]:
    """Engine reachable? each image present? (and the connected client, if any)."""
    try:
        client = docker_backend.connect(timeout=3)
    except SandboxError as exc:
        engine_fix = "sudo " + SETUP if os.geteuid() != 0 else SETUP
        return [Capability("docker engine", False, exc.message, engine_fix)], None
    version = client.version().get("Version", "?")
    caps = [Capability("docker engine", True, f"reachable, version {version}")]
    for image in images:
        try:
            docker_backend.require_image(client, image)
            caps.append(Capability(f"image {image}", True, "present"))
        except SandboxError as exc:
            caps.append(Capability(f"image {image}", False, exc.message, image_fix(image)))
    return caps, client


def image_fix(image: str) -> str:
    """The command that puts a missing image in the engine: the setup script builds only
    the stock image; a project's image is `nexusd sandbox build`'s; any other is pulled
    where there is a network, or loaded from a saved archive where there is none."""
    if image == STOCK_IMAGE:
        return SETUP
    if image.startswith(f"{REPOSITORY}:"):
        return "nexusd sandbox build"
    archive = image.rsplit("/", 1)[-1].replace(":", "_")
    return f"docker pull {image} (with no network: docker load -i {archive}.tar)"


def userns_status() -> Capability:
    """Whether user namespaces can be created (bwrap needs them as a non-root user)."""
    limit = Path("/proc/sys/user/max_user_namespaces")
    value = limit.read_text().strip() if limit.exists() else "?"
    ok = value not in ("0",)
    return Capability(
        "user namespaces",
        ok,
        f"max_user_namespaces={value}",
        "" if ok else "sysctl -w user.max_user_namespaces=15000",
    )


def bwrap_status() -> Capability:
    """Whether bwrap is installed and can build its sandbox here."""
    ok, detail = bwrap_backend.usable()
    fix = "" if ok else (SETUP if shutil.which("bwrap") is None else "enable user namespaces")
    return Capability("bubblewrap", ok, detail, fix)


def choose(config: Config, images: list[str] | None = None) -> Choice:
    """Resolve `sandbox.backend` to a backend, connecting to docker when it is picked."""
    wanted = config.sandbox.backend
    images = images or [config.sandbox.image]
    if wanted != "auto":
        # Chosen by name: docker alone needs its engine now, to fail here and not per check.
        client = docker_backend.connect() if wanted == "docker" else None
        isolation = "" if ISOLATED[wanted] else " (NOT isolated)"
        return Choice(wanted, f"sandbox.backend is {wanted}{isolation}", client)
    caps, client = docker_status(images)
    missing = [c for c in caps if not c.ok]
    if not missing:
        return Choice("docker", "auto: docker engine reachable and image present", client)
    why = "; ".join(f"{c.name}: {c.detail}" for c in missing)
    bwrap = bwrap_status()
    if bwrap.ok:
        reason = f"auto: docker unavailable ({why}); using bubblewrap"
        return Choice("bwrap", reason, fallback=fallback_note("bwrap", why))
    return Choice(
        "subprocess",
        f"auto: docker unavailable ({why}); bwrap unavailable ({bwrap.detail}); "
        "falling back to an UNISOLATED subprocess",
        fallback=fallback_note("subprocess", f"{why}; bwrap: {bwrap.detail}"),
    )


def fallback_note(backend: str, why: str) -> str:
    """The sentence every result, response and status shows when `auto` left docker."""
    return (
        f"{FALLBACK_PREFIX} {backend}, not docker: {why}. "
        "Run `nexusd doctor` for the fix, or set sandbox.backend to silence this."
    )


def report(config: Config) -> dict[str, Any]:
    """Everything `nexusd doctor` prints: capabilities, the choice and fixes."""
    images = sorted(
        {config.sandbox.image} | {c.get("image") or config.sandbox.image for c in config.checks}
    )
    caps, _client = docker_status(images)
    caps += [bwrap_status(), userns_status()]
    choice = choose(config, images)
    return {
        "configured": config.sandbox.backend,
        "backend": choice.backend,
        "reason": choice.reason,
        "isolated": choice.backend != "subprocess",
        "running_as_root": os.geteuid() == 0,
        "capabilities": [
            {"name": c.name, "ok": c.ok, "detail": c.detail, "fix": c.fix} for c in caps
        ],
    }
