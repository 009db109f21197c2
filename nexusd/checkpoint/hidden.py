"""Index entries git is told not to look at: `--assume-unchanged` and `--skip-worktree`.

`git add -A` trusts both bits and never reads such a file, so a snapshot built from a copy
of the real index would hold the index's version and miss the edit on disk (and a restore
would then overwrite that edit with nothing left to undo it). The bits are cleared in the
snapshot's private index only; the real index keeps them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from nexusd.git import is_attributes_file, join_z, run_git, split_z, try_git_text
from nexusd.paths import RepoLayout


@dataclass(frozen=True)
class Hidden:
    """Paths of an index with either bit set; `absent` are skip-worktree ones not on disk;
    `attributes` its `.gitattributes` files (the same listing says whether git may convert)."""

    assumed: tuple[str, ...] = ()
    skip_worktree: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()


def hidden_entries(layout: RepoLayout, env: Mapping[str, str] | None = None) -> Hidden:
    """The assume-unchanged and skip-worktree entries of the index (the real one by default)."""
    out = run_git(layout.root, "ls-files", "-v", "-z", env=env)
    assumed: list[str] = []
    skip: list[str] = []
    attributes: list[str] = []
    for item in split_z(out):
        tag, _, path = item.partition(" ")
        if is_attributes_file(path):
            attributes.append(path)
        # `ls-files -v`: a lowercase tag is assume-unchanged, `S`/`s` is skip-worktree.
        if tag.islower():
            assumed.append(path)
        if tag in ("S", "s"):
            skip.append(path)
    # A skip-worktree file missing from disk is one a sparse checkout never wrote: it is
    # not deleted, so it stays as the index has it.
    absent = tuple(p for p in skip if not os.path.lexists(layout.root / p))
    return Hidden(tuple(assumed), tuple(skip), absent, tuple(attributes))


def reveal(layout: RepoLayout, env: Mapping[str, str]) -> Hidden:
    """Clear both bits in the private index `env` names, except on absent skip-worktree
    files; return what was found, so `git add` reads every file that is on disk."""
    found = hidden_entries(layout, env)
    keep = set(found.absent)
    # One flag per call: update-index applies only the first of the two it is given.
    for flag, paths in (
        ("--no-assume-unchanged", [p for p in found.assumed if p not in keep]),
        ("--no-skip-worktree", [p for p in found.skip_worktree if p not in keep]),
    ):
        if paths:
            run_git(
                layout.root, "update-index", flag, "-z", "--stdin", env=env, input=join_z(paths)
            )
    return found


def is_sparse(layout: RepoLayout, found: Hidden) -> bool:
    """Whether `git add` needs `--sparse` to read files outside the sparse-checkout cone."""
    if found.skip_worktree:
        return True
    return try_git_text(layout.root, "config", "--type=bool", "core.sparseCheckout") == "true"
