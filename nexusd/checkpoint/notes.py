"""Check results attached to checkpoints as git notes under `refs/notes/nexus`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from nexusd.checkpoint.model import NOTES_REF, is_valid_id
from nexusd.git import IDENTITY, cat_blobs, run_git, try_git_text
from nexusd.paths import RepoLayout
from nexusd.yamlload import MAX_DEPTH, load


def _commit_of(layout: RepoLayout, commit_or_id: str) -> str:
    if is_valid_id(commit_or_id):
        from nexusd.checkpoint.listing import resolve

        return resolve(layout, commit_or_id).commit
    return commit_or_id


def read_note(layout: RepoLayout, commit_or_id: str) -> dict[str, Any]:
    """The note on a checkpoint as a mapping ({} when none); JSON or YAML notes are read."""
    text = try_git_text(
        layout.root, "notes", f"--ref={NOTES_REF}", "show", _commit_of(layout, commit_or_id)
    )
    return parse_note(text or "")


def parse_note(text: str) -> dict[str, Any]:
    """A note's text as a mapping: JSON first, then YAML; anything else kept under `text`."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        try:
            data = load(text)  # refuses nesting deeper than MAX_DEPTH
        except yaml.YAMLError:
            data = None
    # Notes come from remotes too (`checkpoint fetch`): one nested deeper than any nexusd
    # writes stays text, or merging and writing it would run out of Python's stack.
    if isinstance(data, dict) and _deeper_than(data, MAX_DEPTH):
        data = None
    return dict(data) if isinstance(data, dict) else {"text": text}


def _deeper_than(data: object, limit: int) -> bool:
    """Whether mappings and lists nest in `data` more than `limit` levels (no recursion)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return False


def merge_note(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive merge: mappings merge key by key, anything else in `new` wins."""
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_note(out[key], value)
        else:
            out[key] = value
    return out


def attach_note(layout: RepoLayout, commit_or_id: str, data: Mapping[str, Any]) -> None:
    """Merge `data` into the JSON note of a checkpoint (id or commit)."""
    commit = _commit_of(layout, commit_or_id)
    merged = merge_note(read_note(layout, commit), data)
    text = json.dumps(merged, indent=2, sort_keys=True, default=str, ensure_ascii=False) + "\n"
    run_git(
        layout.root,
        "notes",
        f"--ref={NOTES_REF}",
        "add",
        "-f",
        "-F",
        "-",
        commit,
        env=IDENTITY,
        input=text.encode("utf-8"),
    )


def check_status(note: Mapping[str, Any]) -> str | None:
    """`passed`, `failed`, … from a note (`status` or `checks.status`), None when unknown."""
    status = note.get("status")
    checks = note.get("checks")
    if status is None and isinstance(checks, Mapping):
        status = checks.get("status")
    return str(status) if status is not None else None


def notes_for(layout: RepoLayout, commits: list[str]) -> dict[str, dict[str, Any]]:
    """Notes of many commits in two git calls: commit -> note mapping (only those with one)."""
    listing = try_git_text(layout.root, "notes", f"--ref={NOTES_REF}", "list")
    if not listing:
        return {}
    wanted = set(commits)
    pairs = [line.split() for line in listing.splitlines() if len(line.split()) == 2]
    blobs = {commit: blob for blob, commit in pairs if commit in wanted}
    if not blobs:
        return {}
    contents = cat_blobs(layout.root, blobs.values())
    return {
        commit: parse_note(data.decode("utf-8", "replace"))
        for commit, data in zip(blobs, contents, strict=True)
    }
