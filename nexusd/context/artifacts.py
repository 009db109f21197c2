"""Facts about the request's relevant artifacts, read only when they lie inside the repository
and git would show them (tracked, or untracked and not ignored), and are not memory files."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ArtifactStatus = Literal["ok", "missing", "refused", "directory", "unreadable"]

# Files larger than this are measured but not parsed or searched.
MAX_READ_BYTES = 524_288
MAX_SYMBOLS = 40
# Keywords this short match whole words only when searching artifacts.
SHORT_WORD = 3
# Memory files, as `memory.sources` names them by default: their sections need roles, and a
# plan quotes its artifacts to whoever reads it.
MEMORY_GLOBS = ("MEMORY.md", "memory/daily/*.md")


@dataclass(frozen=True)
class Symbol:
    """A top-level class or function of a Python file."""

    kind: Literal["class", "function"]
    name: str
    line: int


@dataclass(frozen=True)
class ArtifactFact:
    """What the librarian found at one artifact path."""

    path: str  # as the request wrote it
    rel: str | None  # repository-relative, None when refused
    status: ArtifactStatus
    size: int = 0
    lines: int = 0
    symbols: tuple[Symbol, ...] = ()
    note: str = ""  # why it was refused, or why it could not be parsed
    description: str = ""  # from a "related files" list
    text: str | None = None  # the content, kept for keyword search; never rendered whole

    @property
    def readable(self) -> bool:
        """The file exists inside the repository and its text was read."""
        return self.status == "ok" and self.text is not None


def clean_path(raw: str) -> str:
    """Strip the decoration requests put around paths: quotes, backticks, bullets, `:line`."""
    path = raw.strip().strip("`'\"").strip()
    path = re.sub(r"^(?:[-*+]\s+)", "", path)
    path = re.sub(r":\d+(?::\d+)?$", "", path)  # `src/x.py:42` names a file
    return path


def resolve_inside(root: Path, raw: str) -> tuple[Path | None, str]:
    """Resolve `raw` against `root`; (None, reason) when it leaves the repository."""
    path = clean_path(raw)
    if not path:
        return None, "empty path"
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    real_root = root.resolve()
    resolved = candidate.resolve()  # follows symlinks and `..`
    if not resolved.is_relative_to(real_root):
        how = "through a symlink" if _via_symlink(root, candidate) else "outside the repository"
        return None, f"refused: resolves {how} ({resolved}); only files inside {real_root} are read"
    rel = resolved.relative_to(real_root)
    if rel.parts[:1] == (".git",):
        return None, "refused: nexusd does not read inside .git/"
    return resolved, ""


def _via_symlink(root: Path, candidate: Path) -> bool:
    probe = candidate
    while probe not in (probe.parent, root):
        if probe.is_symlink():
            return True
        probe = probe.parent
    return False


def git_lists(root: Path, rel: str) -> bool:
    """True when git tracks `rel` (repository-relative, posix) or lists it as untracked
    and not ignored: never `.env` or anything else a `.gitignore` hides."""
    from nexusd.git import run_git

    listed = run_git(
        root,
        "--literal-pathspecs",
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
        "--",
        rel,
    )
    return rel.encode("utf-8", "surrogateescape") in listed.split(b"\0")


def _withheld(root: Path, rel: str, memory_globs: Sequence[str]) -> str:
    """Why the file `rel` is not read (a memory file, ignored by git), or ""."""
    from nexusd.errors import NexusError
    from nexusd.memory.sources import glob_regex

    if any(glob_regex(g.strip().lstrip("./")).match(rel) for g in memory_globs if g.strip()):
        return "refused: a memory file (its sections need roles); nexusd searches memory itself"
    try:
        listed = git_lists(root, rel)
    except NexusError as exc:
        return f"refused: git could not list it ({exc.message}); only files git lists are read"
    if not listed:
        return (
            f"refused: git ignores it (or does not list {rel}); only files git tracks or would"
            " add are read"
        )
    return ""


def python_symbols(text: str) -> tuple[tuple[Symbol, ...], str]:
    """Top-level classes and functions of Python source; ((), reason) when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return (), f"does not parse as Python (line {line}): {getattr(exc, 'msg', exc)}"
    out: list[Symbol] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out.append(Symbol("class", node.name, node.lineno))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append(Symbol("function", node.name, node.lineno))
    return tuple(out[:MAX_SYMBOLS]), ""


def inspect_artifact(
    root: Path, raw: str, description: str = "", *, memory_globs: Sequence[str] = MEMORY_GLOBS
) -> ArtifactFact:
    """Measure one artifact: existence, size, lines, Python symbols; refuse paths leaving root,
    files git ignores and memory files (`memory_globs`)."""
    shown = clean_path(raw) or raw
    resolved, reason = resolve_inside(root, raw)
    if resolved is None:
        return ArtifactFact(shown, None, "refused", note=reason, description=description)
    rel = resolved.relative_to(root.resolve()).as_posix() or "."
    if resolved.is_dir():
        count = sum(1 for _ in resolved.iterdir())
        return ArtifactFact(
            shown, rel, "directory", note=f"a folder with {count} entries", description=description
        )
    if not resolved.exists():
        return ArtifactFact(shown, rel, "missing", note="does not exist", description=description)
    if not resolved.is_file():
        # FIFOs, sockets and devices would block or never end: never read them.
        return ArtifactFact(
            shown, rel, "unreadable", note="not a regular file", description=description
        )
    why = _withheld(root, rel, memory_globs)
    if why:
        return ArtifactFact(shown, None, "refused", note=why, description=description)
    try:
        size = resolved.stat().st_size
        if size > MAX_READ_BYTES:
            return ArtifactFact(
                shown, rel, "ok", size=size, note="too large to read", description=description
            )
        data = resolved.read_bytes()
    except OSError as exc:
        return ArtifactFact(shown, rel, "unreadable", note=str(exc), description=description)
    if b"\0" in data[:8192]:
        return ArtifactFact(shown, rel, "ok", size=size, note="binary", description=description)
    text = data.decode("utf-8", "replace")
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    symbols: tuple[Symbol, ...] = ()
    note = ""
    if resolved.suffix in (".py", ".pyi"):
        symbols, note = python_symbols(text)
    return ArtifactFact(
        shown, rel, "ok", size, lines, symbols, note=note, description=description, text=text
    )


@dataclass(frozen=True)
class Hit:
    """A line of an artifact that mentions a keyword."""

    path: str
    line: int
    text: str
    matched: tuple[str, ...]


def _mention(word: str) -> re.Pattern[str]:
    # A word prefix (`lock` finds `locks`), but a short word only whole: `non` is not `None`.
    tail = r"\b" if len(word) <= SHORT_WORD else ""
    return re.compile(r"\b" + re.escape(word) + tail, re.IGNORECASE)


def find_mentions(
    artifacts: tuple[ArtifactFact, ...], words: tuple[str, ...], *, limit: int = 5
) -> tuple[Hit, ...]:
    """Lines of readable artifacts that mention the most of `words` (best first)."""
    if not words:
        return ()
    patterns = [(w, _mention(w)) for w in words]
    scored: list[tuple[int, int, Hit]] = []
    order = 0
    for art in artifacts:
        if not art.readable or art.text is None or art.rel is None:
            continue
        for number, line in enumerate(art.text.splitlines(), start=1):
            matched = tuple(w for w, pat in patterns if pat.search(line))
            if matched:
                hit = Hit(art.rel, number, line.strip()[:160], matched)
                scored.append((-len(matched), order, hit))
                order += 1
    scored.sort(key=lambda item: (item[0], item[1]))
    return tuple(hit for _, _, hit in scored[:limit])
