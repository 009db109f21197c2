"""`open_file`: a slice of one of the repository's own files, and nothing else.

What an agent may open is what git would show it: a file git tracks, or an untracked one
it does not ignore (`git ls-files -co --exclude-standard`). Never anything under the git
directory (tokens, logs, `.git/config`), never an ignored file (`.env`), never a link.
Memory files (`memory.sources`, `memory.extra_globs`) are refused too: their sections
need roles, which the memory tools and the MEMORY.md resource apply. Plan requests and
responses (any `*_plan_request.md` / `*_plan_response.md`, and every file of the watched
folders) quote memory of every category, so they need the role that may plan, as the
`nexusd://plans/latest` resource does.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from nexusd.api.roles import Access, role_hint
from nexusd.config import Config
from nexusd.errors import AccessError, NexusError
from nexusd.paths import RepoLayout

MAX_SLICE_LINES = 400
MAX_SLICE_BYTES = 64 * 1024
MAX_FILE_BYTES = 8 * 1024 * 1024


def _refuse(path: str, why: str, hint: str) -> NexusError:
    return NexusError(f"refusing to open {path!r}: {why}", hint=hint)


def is_plan_file(config: Config, rel: PurePosixPath) -> bool:
    """True for a plan request or response (or one kept aside) anywhere, or any file of a
    watched folder."""
    from nexusd.protocol.naming import is_kept_response, is_request_file, is_response_file

    if is_request_file(rel.name) or is_response_file(rel.name) or is_kept_response(rel.name):
        return True
    for folder in config.watch.paths:
        parts = PurePosixPath(Path(folder).as_posix()).parts
        if parts and rel.parts[: len(parts)] == parts:
            return True
    return False


def check_openable(
    layout: RepoLayout, config: Config, path: str, *, access: Access, role: str
) -> PurePosixPath:
    """The repository-relative path `path` names, if an agent of `role` may open it; else
    NexusError (AccessError when only a role is missing)."""
    from nexusd.context.artifacts import git_lists
    from nexusd.memory.sources import glob_regex, memory_globs

    if "\0" in path:  # no file name holds one; os calls would raise ValueError on it
        raise _refuse(path, "a path cannot hold a NUL character", "e.g. src/app/config.py")
    rel = PurePosixPath(Path(path).as_posix())
    if rel.is_absolute() and PurePosixPath(layout.root.as_posix()) in rel.parents:
        # An absolute path inside the repository (what code_symbols accepts too), as written:
        # not resolved, so a link on the way is still seen (and refused) below.
        rel = rel.relative_to(layout.root.as_posix())
    if rel.is_absolute() or ".." in rel.parts or not path.strip() or not rel.parts:
        raise _refuse(
            path,
            "give a path relative to the repository, inside it",
            "e.g. src/app/config.py (no leading /, no ..)",
        )
    git_hint = "nothing under the git directory is served; read the repository's own files"
    if any(part.lower() == ".git" for part in rel.parts):
        raise _refuse(path, "it is inside the git directory", git_hint)
    try:
        full = (layout.root / rel).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a link loop, before Python 3.13
        raise _refuse(
            path,
            f"it cannot be resolved ({getattr(exc, 'strerror', None) or exc}): a link loop,"
            " or a name too long",
            "links are never opened; open the file they point to",
        ) from None
    for git_dir in {layout.git_dir.resolve(), layout.git_common_dir.resolve()}:
        if full.is_relative_to(git_dir):
            raise _refuse(path, "it is inside the git directory", git_hint)
    text = rel.as_posix()
    if any(glob_regex(g).match(text) for g in memory_globs(config)):
        raise _refuse(
            path,
            "it is a memory file, whose sections need roles",
            "use memory_search / memory_get, or read the nexusd://memory/MEMORY.md resource",
        )
    if is_plan_file(config, rel) and not access.may(role, "plan"):
        need = access.action_role("plan")
        raise AccessError(
            f"refusing to open {path!r}: plan requests and responses quote memory of every"
            f" category, and role {role!r} may not plan (it requires role {need!r})",
            hint=f"{role_hint(need)}, or change api.actions.plan",
            status=403,
        )
    if not git_lists(layout.root, text):
        raise _refuse(
            path,
            "git neither tracks it nor lists it as untracked (ignored, missing or a folder)",
            "open files git tracks or would add; list them with code_search",
        )
    return rel


def open_slice(
    layout: RepoLayout,
    config: Config,
    path: str,
    start_line: int,
    end_line: int | None,
    *,
    access: Access,
    role: str,
) -> dict[str, Any]:
    """Lines `start_line..end_line` (1-based, inclusive) of a file an agent may open (see
    `check_openable`), at most MAX_SLICE_LINES lines and MAX_SLICE_BYTES bytes; a line
    longer than that is cut, and the answer says so."""
    from nexusd.code.reader import read_inside
    from nexusd.code.selection import looks_binary
    from nexusd.code.units import text_lines

    rel = check_openable(layout, config, path, access=access, role=role)
    data = read_inside(layout.root, Path(rel), MAX_FILE_BYTES, setting="the open limit")
    if isinstance(data, str):
        hint = (
            "a file over the open limit is not served, not even in slices; code_search and"
            " code_symbols find what is in it when it is indexed"
            if data.startswith("too large")
            else "list files with code_search"
        )
        raise NexusError(f"cannot open {path}: {data}", hint=hint)
    if looks_binary(data):
        raise NexusError(
            f"cannot open {path}: it is a binary file (a NUL byte in its first 8 KiB)",
            hint="open text files; code_search and code_symbols list the indexed ones",
        )
    # Numbered as editors, grep and the code index number them: only `\n` ends a line (not
    # `\f`, `\x1c`, `\x85`, `\u2028`…, which str.splitlines also splits at), CRLF is one end.
    text = data.decode("utf-8", "replace")
    lines = [line.removesuffix("\r") for line in text_lines(text)] if text else []
    first = max(start_line, 1)
    if first > max(len(lines), 1) or (end_line is not None and end_line < first):
        raise NexusError(
            f"cannot open lines {first}–{end_line or first} of {path}: it has {len(lines)}"
            f" line{'' if len(lines) == 1 else 's'}",
            hint="give 1 <= start_line <= end_line, within the file",
        )
    last = min(end_line or first + MAX_SLICE_LINES - 1, first + MAX_SLICE_LINES - 1, len(lines))
    shown: list[str] = []
    size = 0
    cut = False
    for line in lines[first - 1 : last]:
        raw = line.encode("utf-8")
        if size + len(raw) + 1 > MAX_SLICE_BYTES:
            if not shown:  # one line over the limit: its start, rather than nothing
                shown.append(raw[: MAX_SLICE_BYTES - 1].decode("utf-8", "ignore"))
                cut = True
            break
        size += len(raw) + 1
        shown.append(line)
    end = first + len(shown) - 1
    out: dict[str, Any] = {
        "path": rel.as_posix(),
        "start_line": first,
        "end_line": end,
        "total_lines": len(lines),
        "truncated": cut or (end < (end_line or len(lines)) and end < len(lines)),
        "text": "\n".join(shown),
    }
    if cut:
        out["note"] = (
            f"line {first} is longer than {MAX_SLICE_BYTES} bytes: only its start is shown"
        )
    return out
