"""`nexusd init`: scaffold the repository's canonical files without ever overwriting one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nexusd.paths import RepoLayout
from nexusd.templates import template_text
from nexusd.templates.stacks import PYTHON_STACK, Stack, config_text

if TYPE_CHECKING:
    from nexusd.config import Config

SCRATCHPAD = ".scratchpad_logs"
# Not `*_plan_request.md`, so the daemon never answers the template itself.
REQUEST_TEMPLATE_NAME = "TEMPLATE_plan_request.md.example"
# Files meant to be edited and committed: rw-r--r-- (mkstemp alone gives 0600).
FILE_MODE = 0o644


@dataclass(frozen=True)
class ScaffoldReport:
    """Which paths `init` created and which already existed (repository-relative)."""

    created: tuple[str, ...]
    kept: tuple[str, ...]


def scaffold_plan(layout: RepoLayout) -> tuple[tuple[Path, str | None], ...]:
    """What `init` writes: (path, template name), None for a folder."""
    scratch = layout.root / SCRATCHPAD
    return (
        (layout.config_file, "config"),
        (scratch, None),
        (scratch / "README.md", "scratchpad_readme"),
        (scratch / REQUEST_TEMPLATE_NAME, "request"),
        (layout.memory_file, "memory"),
        (layout.daily_dir, None),
        (layout.daily_dir / ".gitkeep", ""),
    )


def own_files(layout: RepoLayout, config: Config) -> list[str]:
    """What nexusd writes in the working tree, repository-relative: `init`'s files, the
    request folders `config` watches, its memory sources (globs kept as they are)."""
    root = layout.root.resolve()
    watched = (layout.root / p for p in config.watch.paths)
    found = []
    for path in (*(p for p, _ in scaffold_plan(layout)), *watched):
        with contextlib.suppress(ValueError):  # a folder outside the repository
            found.append(path.resolve().relative_to(root).as_posix())
    return list(dict.fromkeys([*found, *config.memory.sources]))


def scaffold(layout: RepoLayout, stack: Stack = PYTHON_STACK) -> ScaffoldReport:
    """Create what is missing, the config for `stack`; keep every existing file and folder."""
    created: list[str] = []
    kept: list[str] = []
    for path, template in scaffold_plan(layout):
        rel = path.relative_to(layout.root).as_posix()
        if path.exists() or path.is_symlink():
            kept.append(rel)
            continue
        if template is None:
            path.mkdir(parents=True)
        elif not _create_exclusive(path, _text(template, stack)):
            kept.append(rel)
            continue
        created.append(rel)
    return ScaffoldReport(created=tuple(created), kept=tuple(kept))


def _text(template: str, stack: Stack) -> str:
    if template == "config":
        return config_text(stack)
    return template_text(template) if template else ""


def _create_exclusive(path: Path, text: str) -> bool:
    """Publish a complete file at `path` unless one exists (False then); never overwrites."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
