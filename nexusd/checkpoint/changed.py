"""Which files a checkpoint changes relative to the commit it was taken on, conversions aside.

An as-is checkpoint (see `convert`) holds the disk's bytes of the files git converts, its
commit git's cleaned blobs: a `.bat` file under `eol=crlf` that a clone wrote CRLF and
nobody touched differs from HEAD's LF blob, though it is exactly what a checkout of HEAD
writes. Such a file is not counted as changed: a file changed is one whose bytes differ
from HEAD's file as a checkout writes it (with the working tree's attributes). A file
held with bytes a checkout would not write (CRLF under `text=auto` on Linux) still
counts, as its checkpoint does hold other bytes than HEAD gives.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from nexusd.checkpoint.convert import FILE_MODES, c_quote, checkout_converts
from nexusd.checkpoint.model import Checkpoint
from nexusd.checkpoint.shared import scratch_dir
from nexusd.checkpoint.snapshot import temp_index
from nexusd.errors import GitError
from nexusd.git import join_z, run_git, split_z
from nexusd.paths import RepoLayout

# (path, blob in the commit, blob in the checkpoint) of a file both hold.
Pair = tuple[str, str, str]


def changed_paths(layout: RepoLayout, checkpoints: Sequence[Checkpoint]) -> dict[str, list[str]]:
    """id → the paths each checkpoint changes relative to the commit it was taken on (the
    empty tree when none), leaving out files held as a checkout of that commit writes them."""
    found, unchanged = _scan(layout, checkpoints)
    return {cid: [p for p in paths if p not in unchanged[cid]] for cid, paths in found.items()}


def unchanged_paths(layout: RepoLayout, checkpoint: Checkpoint) -> set[str]:
    """The paths `checkpoint` holds other blobs for than its commit, but as a checkout of
    that commit writes them (not changed: see the module's docstring)."""
    return _scan(layout, [checkpoint])[1][checkpoint.id]


def _scan(
    layout: RepoLayout, checkpoints: Sequence[Checkpoint]
) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    """(id → every path its diff with its commit names, id → those held as checked out)."""
    if not checkpoints:
        return {}, {}
    by_commit = {c.commit: c for c in checkpoints}
    out = run_git(
        layout.root,
        "diff-tree",
        "--stdin",
        "--root",
        "-r",
        "--no-renames",
        "-z",
        input="".join(f"{c.commit}\n" for c in checkpoints).encode(),
    )
    found: dict[str, list[str]] = {c.id: [] for c in checkpoints}
    modified: list[tuple[str, Pair]] = []
    current: Checkpoint | None = None
    tokens = iter(split_z(out))
    for token in tokens:
        if not token.startswith(":"):
            current = by_commit.get(token)
            continue
        path = next(tokens)
        if current is None:
            continue
        found[current.id].append(path)
        old_mode, new_mode, old_oid, new_oid, letter = token.lstrip(":").split()
        # Older checkpoints hold git's cleaned blobs: their differences are all real.
        if current.as_is and letter == "M" and old_mode in FILE_MODES and new_mode in FILE_MODES:
            modified.append((current.id, (path, old_oid, new_oid)))
    same = _as_checked_out(layout, sorted({pair for _, pair in modified})) if modified else set()
    unchanged: dict[str, set[str]] = {c.id: set() for c in checkpoints}
    for cid, pair in modified:
        if pair in same:
            unchanged[cid].add(pair[0])
    return found, unchanged


def _as_checked_out(layout: RepoLayout, pairs: list[Pair]) -> set[Pair]:
    """Those of `pairs` whose checkpoint blob is the commit's blob as a checkout writes it
    (each converting file written once by `checkout-index` to a scratch folder, hashed)."""
    converted = checkout_converts(layout, sorted({path for path, _, _ in pairs}), {})
    wanted = [pair for pair in pairs if pair[0] in converted]
    if not wanted:
        return set()
    same: set[Pair] = set()
    with (
        temp_index(layout, seed=False) as env,
        tempfile.TemporaryDirectory(dir=scratch_dir(layout)) as tmp,
    ):
        # One blob per path in a scratch index: several checkpoints may hold one path with
        # different blobs, so each round writes each path once.
        while wanted:
            batch: dict[str, Pair] = {}
            rest: list[Pair] = []
            for pair in wanted:
                if pair[0] in batch:
                    rest.append(pair)
                else:
                    batch[pair[0]] = pair
            try:
                same |= _round(layout, env, Path(tmp), list(batch.values()))
            except GitError:
                break  # a file and a folder of one name, say: those left count as changed
            wanted = rest
    return same


def _round(layout: RepoLayout, env: dict[str, str], tmp: Path, pairs: list[Pair]) -> set[Pair]:
    entries = [f"100644 {old}\t{path}" for path, old, _new in pairs]
    run_git(layout.root, "update-index", "-z", "--index-info", env=env, input=join_z(entries))
    prefix = f"{tmp}/"
    run_git(layout.root, "checkout-index", "-a", "-f", f"--prefix={prefix}", env=env)
    out = run_git(
        layout.root,
        "hash-object",
        "--no-filters",
        "--stdin-paths",
        input=b"".join(c_quote(prefix + path) + b"\n" for path, _, _ in pairs),
    )
    hashes = out.decode("ascii", "replace").split()
    run_git(layout.root, "read-tree", "--empty", env=env)
    return {pair for pair, oid in zip(pairs, hashes, strict=True) if oid == pair[2]}
