"""Listing, resolving and dropping checkpoints."""

from __future__ import annotations

import difflib
from datetime import datetime

from nexusd.checkpoint.model import REF_PREFIX, Checkpoint, id_time, parse_trailers
from nexusd.errors import GitError
from nexusd.git import run_git, split_z
from nexusd.paths import RepoLayout

_SEP = "\x1f"
_END = "\x1e"
_FORMAT = _SEP.join(
    ["%(refname)", "%(objectname)", "%(tree)", "%(parent)", "%(creatordate:unix)", "%(contents)"]
)


def list_checkpoints(layout: RepoLayout) -> list[Checkpoint]:
    """All checkpoints, oldest first."""
    out = run_git(layout.root, "for-each-ref", f"--format={_FORMAT}{_END}", REF_PREFIX).decode(
        "utf-8", "replace"
    )
    found: list[Checkpoint] = []
    for chunk in out.split(_END):
        record = chunk.lstrip("\n")
        if not record:
            continue
        ref, commit, tree, parent, unix, contents = record.split(_SEP, 5)
        cid = ref.removeprefix(REF_PREFIX)
        trailers = parse_trailers(contents)
        try:
            created = id_time(cid)
        except ValueError:
            created = datetime.fromtimestamp(int(unix or 0)).astimezone()
        found.append(
            Checkpoint(
                id=cid,
                commit=commit,
                tree=tree,
                created_at=created,
                reason=trailers.get("Nexus-Reason", "unknown"),
                parent=parent.split()[0] if parent.strip() else None,
                subject=contents.splitlines()[0] if contents else "",
                trailers=trailers,
            )
        )
    found.sort(key=lambda c: (c.created_at, c.id))
    return found


def closest_ids(wanted: str, ids: list[str], n: int = 5) -> list[str]:
    """The known ids most similar to `wanted` (for an error message)."""
    return difflib.get_close_matches(wanted, ids, n=n, cutoff=0.3)


def resolve(layout: RepoLayout, wanted: str) -> Checkpoint:
    """Find a checkpoint by id, unique id prefix, ref name, or `latest`."""
    checkpoints = list_checkpoints(layout)
    key = wanted.strip().removeprefix("refs/nexus/checkpoints/")
    if key == "latest" and checkpoints:
        return checkpoints[-1]
    exact = [c for c in checkpoints if c.id == key]
    if exact:
        return exact[0]
    prefixed = [c for c in checkpoints if key and c.id.startswith(key)]
    if len(prefixed) == 1:
        return prefixed[0]
    ids = [c.id for c in checkpoints]
    if len(prefixed) > 1:
        raise GitError(
            f"checkpoint id {wanted!r} is ambiguous ({len(prefixed)} match)",
            hint="use more characters: " + ", ".join(c.id for c in prefixed[-5:]),
        )
    near = closest_ids(key, ids)
    if not ids:
        hint = "no checkpoints exist yet; make one with `nexusd checkpoint create`"
    elif near:
        hint = "did you mean: " + ", ".join(near)
    else:
        hint = "list them with `nexusd checkpoint list`; the newest is " + ids[-1]
    raise GitError(f"no checkpoint {wanted!r}", hint=hint)


def files_changed(layout: RepoLayout, checkpoints: list[Checkpoint]) -> dict[str, int]:
    """How many paths each checkpoint changes relative to the HEAD it was taken on."""
    if not checkpoints:
        return {}
    by_commit = {c.commit: c.id for c in checkpoints}
    lines = "".join(f"{c.commit}\n" for c in checkpoints).encode()
    out = run_git(
        layout.root,
        "diff-tree",
        "--stdin",
        "--root",
        "-r",
        "--no-renames",
        "--name-only",
        "-z",
        input=lines,
    )
    counts = {c.id: 0 for c in checkpoints}
    current: str | None = None
    for token in split_z(out):
        if token in by_commit:
            current = by_commit[token]
        elif current is not None:
            counts[current] += 1
    return counts


def drop(layout: RepoLayout, checkpoint: Checkpoint) -> None:
    """Delete a checkpoint's ref (its objects go away with the next `git gc`)."""
    run_git(layout.root, "update-ref", "-d", checkpoint.ref, checkpoint.commit)
