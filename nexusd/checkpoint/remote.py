"""Share checkpoints and their notes with a remote (`refs/nexus/*` and `refs/notes/nexus`).

Notes hold check results, which retention keeps checkpoints for: they are merged, never
replaced. A fetch merges the remote's notes into ours (ours win where both have one for
the same checkpoint); a push sends ours only as a fast-forward of the remote's, so it never
erases results someone else pushed.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexusd.checkpoint.listing import scan
from nexusd.checkpoint.model import NOTES_REF, REF_PREFIX
from nexusd.errors import GitError
from nexusd.git import git_failure, git_run, git_text, run_git, try_git_text
from nexusd.paths import RepoLayout

REFSPEC = "refs/nexus/*:refs/nexus/*"
# Where a fetch puts the remote's notes before merging them into ours.
FETCHED_NOTES = "refs/notes/nexus-fetched"
# The flags of `git push --porcelain`, by what they mean.
_PUSH_FLAGS = {
    "*": "new",
    " ": "updated",
    "+": "forced",
    "-": "deleted",
    "=": "up_to_date",
    "!": "rejected",
}


def checkpoint_id(ref: str) -> str | None:
    """The id of the checkpoint `ref` names, None for a ref that is not a checkpoint's."""
    return ref.removeprefix(REF_PREFIX) if ref.startswith(REF_PREFIX) else None


@dataclass(frozen=True)
class PushedRef:
    """One ref of a push: its name on the remote, what happened to it, git's summary."""

    ref: str
    status: str  # new | updated | forced | deleted | up_to_date | rejected
    summary: str  # `[new reference]`, `12abba6..3ae0bf0`, `[up to date]`, …

    @property
    def id(self) -> str | None:
        """The checkpoint's id (None for the notes ref, or any ref that is not a checkpoint's)."""
        return checkpoint_id(self.ref)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {"ref": self.ref, "id": self.id, "status": self.status, "summary": self.summary}


def pushed_refs(report: str) -> list[PushedRef]:
    """The refs of a `git push --porcelain` report, in its order (`To …`, `Done` skipped)."""
    refs = []
    for line in report.splitlines():
        flag, tab, rest = line[:1], line[1:2], line[2:]
        if tab == "\t" and flag in _PUSH_FLAGS:
            spec, _, summary = rest.partition("\t")
            refs.append(PushedRef(spec.rpartition(":")[2], _PUSH_FLAGS[flag], summary))
    return refs


@dataclass(frozen=True)
class Fetched:
    """What a fetch changed: refs under refs/nexus/ new here or moved, notes merged.

    The refspec brings every ref under refs/nexus/, so a ref may be other than a checkpoint's.
    """

    new: tuple[str, ...]  # full ref names
    updated: tuple[str, ...]
    notes_merged: bool

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping: each ref by its full name and id (None if not a checkpoint)."""
        return {
            "new": [{"ref": ref, "id": checkpoint_id(ref)} for ref in self.new],
            "updated": [{"ref": ref, "id": checkpoint_id(ref)} for ref in self.updated],
            "notes_merged": self.notes_merged,
        }

    def summary(self) -> str:
        """What changed, in a line (`up to date` when nothing did), checkpoints apart."""
        new = sum(checkpoint_id(ref) is not None for ref in self.new)
        moved = sum(checkpoint_id(ref) is not None for ref in self.updated)
        other_new, other_moved = len(self.new) - new, len(self.updated) - moved
        said = []
        if new or moved:
            said.append(f"{new} new checkpoint(s)" + (f", {moved} updated" if moved else ""))
        if other_new or other_moved:
            said.append(
                f"other refs under refs/nexus/: {other_new} new"
                + (f", {other_moved} updated" if other_moved else "")
            )
        if self.notes_merged:
            said.append("notes merged (ours kept where both had one)")
        return "; ".join(said) or "up to date"


class PushRejected(GitError):
    """A push the remote refused some refs of; `report` is git's porcelain report of all."""

    def __init__(self, error: GitError, report: str) -> None:
        super().__init__(error.message, hint=error.hint)
        self.report = report


def push(layout: RepoLayout, remote: str) -> str:
    """Push every checkpoint ref and the notes to `remote`; return git's report.

    Raises PushRejected (with the report) when the remote refused a ref, GitError otherwise."""
    specs = [f"+{REFSPEC}"]
    notes = try_git_text(layout.root, "rev-parse", "-q", "--verify", NOTES_REF)
    if notes:
        specs.append(f"{NOTES_REF}:{NOTES_REF}")  # not forced: a fast-forward or nothing
    elif not _refs(layout):
        return ""  # git fails on a refspec that matches nothing: there is nothing to push
    args = ("push", "--porcelain", remote, *specs)
    proc = git_run(layout.root, *args)
    report = proc.stdout.decode("utf-8", "replace").strip()
    if any(line.startswith("!") and NOTES_REF in line for line in report.splitlines()):
        raise PushRejected(
            GitError(
                f"the checkpoints were pushed, but {remote}'s notes hold check results this "
                "repository lacks, so ours were not pushed over them",
                hint=f"run `nexusd checkpoint fetch {remote}` (it merges them), then push again",
            ),
            report,
        )
    if proc.returncode != 0:
        _refuse_broken(layout, "pushed")
        # No such remote, no access: as git says it.
        error = git_failure(layout.root, args, proc, hint=_remote_hint(remote))
        if any(r.status == "rejected" for r in pushed_refs(report)):
            raise PushRejected(error, report)
        raise error
    return report


def fetch(layout: RepoLayout, remote: str) -> str:
    """Fetch checkpoint refs (never pruning local ones) and merge the remote's notes into
    ours; return what changed, in a line."""
    return fetch_checkpoints(layout, remote).summary()


def fetch_checkpoints(layout: RepoLayout, remote: str) -> Fetched:
    """Fetch checkpoint refs (never pruning local ones) and merge the remote's notes into
    ours; return which refs are new or moved, and whether the notes changed."""
    before = _refs(layout)
    try:
        run_git(layout.root, "fetch", "--quiet", remote, f"+{REFSPEC}", hint=_remote_hint(remote))
    except GitError:
        _refuse_broken(layout, "fetched")
        raise
    after = _refs(layout)
    new = sorted(after.keys() - before.keys())
    moved = sorted(ref for ref in after.keys() & before.keys() if after[ref] != before[ref])
    return Fetched(tuple(new), tuple(moved), _merge_notes(layout, remote))


def _remote_hint(remote: str) -> str:
    return (
        f"check that {remote!r} is a remote (`git remote -v` lists them) or a URL you can"
        " reach, and that you may write there (push) or read it (fetch)"
    )


def _refuse_broken(layout: RepoLayout, done: str) -> None:
    """After git failed: when a broken checkpoint ref is why, say so and how to fix it (git
    names only an object id, and every transfer fails while the ref is there)."""
    broken = [b for b in scan(layout)[1] if b.missing]
    if broken:
        names = ", ".join(b.id for b in broken[:3]) + (" …" if len(broken) > 3 else "")
        raise GitError(
            f"nothing was {done}: {len(broken)} checkpoint ref(s) name a missing commit"
            f" ({names}), and git refuses to send or receive refs beside them",
            hint=broken[0].fix
            + (", and the others likewise" if len(broken) > 1 else "")
            + "; `nexusd checkpoint list` names them all",
        )


def _refs(layout: RepoLayout) -> dict[str, str]:
    listed = git_text(
        layout.root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/nexus/"
    )
    return dict(line.partition(" ")[::2] for line in listed.splitlines() if " " in line)


def _merge_notes(layout: RepoLayout, remote: str) -> bool:
    """Merge `remote`'s notes into ours; True when ours changed."""
    # A missing notes ref on the remote is no error: nothing to merge.
    run_git(layout.root, "fetch", "--quiet", remote, f"+{NOTES_REF}:{FETCHED_NOTES}", check=False)
    theirs = try_git_text(layout.root, "rev-parse", "-q", "--verify", FETCHED_NOTES)
    if not theirs:
        return False
    ours = try_git_text(layout.root, "rev-parse", "-q", "--verify", NOTES_REF)
    try:
        if not ours:
            run_git(layout.root, "update-ref", NOTES_REF, theirs)
        else:
            run_git(
                layout.root,
                "-c",
                "user.name=nexusd",
                "-c",
                "user.email=nexusd@localhost",
                "notes",
                f"--ref={NOTES_REF}",
                "merge",
                "--quiet",
                "--strategy=ours",
                FETCHED_NOTES,
            )
    finally:
        run_git(layout.root, "update-ref", "-d", FETCHED_NOTES, check=False)
    return try_git_text(layout.root, "rev-parse", "-q", "--verify", NOTES_REF) != ours
