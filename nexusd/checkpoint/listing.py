"""Listing, resolving and dropping checkpoints."""

from __future__ import annotations

import contextlib
import difflib
from dataclasses import dataclass
from datetime import datetime

from nexusd.checkpoint.changed import changed_paths
from nexusd.checkpoint.model import REF_PREFIX, Checkpoint, id_time, parse_trailers
from nexusd.errors import GitError
from nexusd.git import object_kinds, run_git
from nexusd.paths import RepoLayout

_SEP = "\x1f"
_END = "\x1e"
_FORMAT = _SEP.join(
    ["%(refname)", "%(objectname)", "%(tree)", "%(parent)", "%(creatordate:unix)", "%(contents)"]
)
_NOT_COMMIT = "it names a git object that is not a commit"
_MISSING = "its commit is missing from the object store"
_NOT_READ = {"missing": _MISSING}
# How many refs one `for-each-ref` is given as patterns when broken ones are read around.
_REFS_PER_CALL = 500


@dataclass(frozen=True)
class Broken:
    """A checkpoint ref that names no readable commit: its object is missing, or not a commit."""

    id: str
    commit: str  # the object the ref names
    why: str

    @property
    def missing(self) -> bool:
        """True when the object is not there at all (git then fails on every ref)."""
        return self.why == _MISSING

    @property
    def ref(self) -> str:
        """The full ref name."""
        return REF_PREFIX + self.id

    @property
    def fix(self) -> str:
        """How to get rid of it."""
        return f"drop it with `nexusd checkpoint drop {self.id}`"


def list_checkpoints(layout: RepoLayout) -> list[Checkpoint]:
    """All readable checkpoints, oldest first (broken refs are left out: see scan)."""
    return scan(layout)[0]


def scan(layout: RepoLayout) -> tuple[list[Checkpoint], list[Broken]]:
    """(readable checkpoints oldest first, broken refs): one broken ref must not hide the
    others (`for-each-ref` dies on every ref when one names a missing object)."""
    try:
        return _read(layout, [REF_PREFIX])
    except GitError:
        pass
    listed = run_git(
        layout.root, "for-each-ref", "--format=%(refname) %(objectname)", REF_PREFIX
    ).decode("utf-8", "surrogateescape")
    refs = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line)
    kinds = object_kinds(layout.root, refs.values())
    good = [ref for ref, sha in refs.items() if kinds.get(sha) == "commit"]
    missing = [
        Broken(ref.removeprefix(REF_PREFIX), sha, _NOT_READ.get(kinds.get(sha, ""), _NOT_COMMIT))
        for ref, sha in refs.items()
        if kinds.get(sha) != "commit"
    ]
    found: list[Checkpoint] = []
    broken: list[Broken] = []
    for start in range(0, len(good), _REFS_PER_CALL):
        more, odd = _read(layout, good[start : start + _REFS_PER_CALL])
        found += more
        broken += odd
    found.sort(key=lambda c: (c.created_at, c.id))
    return found, sorted([*missing, *broken], key=lambda b: b.id)


def _read(layout: RepoLayout, patterns: list[str]) -> tuple[list[Checkpoint], list[Broken]]:
    out = run_git(layout.root, "for-each-ref", f"--format={_FORMAT}{_END}", *patterns).decode(
        "utf-8", "replace"
    )
    found: list[Checkpoint] = []
    broken: list[Broken] = []
    for chunk in out.split(_END):
        record = chunk.lstrip("\n")
        if not record:
            continue
        ref, commit, tree, parent, unix, contents = record.split(_SEP, 5)
        cid = ref.removeprefix(REF_PREFIX)
        if not tree:
            # A blob, a tree or a tag: nothing a restore could read.
            broken.append(Broken(cid, commit, _NOT_COMMIT))
            continue
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
    return found, broken


def closest_ids(wanted: str, ids: list[str], n: int = 5) -> list[str]:
    """The known ids most similar to `wanted` (for an error message)."""
    return difflib.get_close_matches(wanted, ids, n=n, cutoff=0.3)


def resolve(layout: RepoLayout, wanted: str) -> Checkpoint:
    """Find a checkpoint by id, unique id prefix, ref name, or `latest`."""
    found = find(layout, wanted)
    if isinstance(found, Broken):
        raise GitError(f"checkpoint {found.id} cannot be read: {found.why}", hint=found.fix)
    return found


def find(layout: RepoLayout, wanted: str) -> Checkpoint | Broken:
    """Like resolve, but a broken ref is returned too (to drop it)."""
    checkpoints, broken = scan(layout)
    key = wanted.strip().removeprefix("refs/nexus/checkpoints/")
    if key == "latest" and checkpoints:
        return checkpoints[-1]
    every: list[Checkpoint | Broken] = [*checkpoints, *broken]
    exact = [c for c in every if c.id == key]
    if exact:
        return exact[0]
    prefixed = [c for c in every if key and c.id.startswith(key)]
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
    """How many paths each checkpoint changes relative to the HEAD it was taken on (one
    whose trees git cannot read is left out)."""
    if not checkpoints:
        return {}
    try:
        return _count_changed(layout, checkpoints)
    except GitError:
        pass
    # git stops at the first unreadable tree: count the others one by one.
    counts: dict[str, int] = {}
    for cp in checkpoints:
        with contextlib.suppress(GitError):
            counts.update(_count_changed(layout, [cp]))
    return counts


def _count_changed(layout: RepoLayout, checkpoints: list[Checkpoint]) -> dict[str, int]:
    # Files held as a checkout of HEAD writes them (an as-is checkpoint's CRLF `.bat` files
    # under `eol=crlf`) are not counted: see `changed`.
    return {cid: len(paths) for cid, paths in changed_paths(layout, checkpoints).items()}


def drop(layout: RepoLayout, checkpoint: Checkpoint | Broken) -> None:
    """Delete a checkpoint's ref (its objects go away with the next `git gc`)."""
    run_git(layout.root, "update-ref", "-d", checkpoint.ref, checkpoint.commit)
