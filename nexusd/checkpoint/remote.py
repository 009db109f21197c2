"""Share checkpoints and their notes with a remote (`refs/nexus/*` and `refs/notes/nexus`).

Notes hold check results, which retention keeps checkpoints for: they are merged, never
replaced. A fetch merges the remote's notes into ours (ours win where both have one for
the same checkpoint); a push sends ours only as a fast-forward of the remote's, so it never
erases results someone else pushed.
"""

from __future__ import annotations

from nexusd.checkpoint.listing import scan
from nexusd.checkpoint.model import NOTES_REF
from nexusd.errors import GitError
from nexusd.git import git_failure, git_run, git_text, run_git, try_git_text
from nexusd.paths import RepoLayout

REFSPEC = "refs/nexus/*:refs/nexus/*"
# Where a fetch puts the remote's notes before merging them into ours.
FETCHED_NOTES = "refs/notes/nexus-fetched"


def push(layout: RepoLayout, remote: str) -> str:
    """Push every checkpoint ref and the notes to `remote`; return git's report."""
    specs = [f"+{REFSPEC}"]
    if try_git_text(layout.root, "rev-parse", "-q", "--verify", NOTES_REF):
        specs.append(f"{NOTES_REF}:{NOTES_REF}")  # not forced: a fast-forward or nothing
    args = ("push", "--porcelain", remote, *specs)
    proc = git_run(layout.root, *args)
    report = proc.stdout.decode("utf-8", "replace").strip()
    if any(line.startswith("!") and NOTES_REF in line for line in report.splitlines()):
        raise GitError(
            f"the checkpoints were pushed, but {remote}'s notes hold check results this "
            "repository lacks, so ours were not pushed over them",
            hint=f"run `nexusd checkpoint fetch {remote}` (it merges them), then push again",
        )
    if proc.returncode != 0:
        _refuse_broken(layout, "pushed")
        # No such remote, no access: as git says it.
        raise git_failure(layout.root, args, proc, hint=_remote_hint(remote))
    return report


def fetch(layout: RepoLayout, remote: str) -> str:
    """Fetch checkpoint refs (never pruning local ones) and merge the remote's notes into
    ours; return what changed, in a line."""
    before = _refs(layout)
    try:
        run_git(layout.root, "fetch", "--quiet", remote, f"+{REFSPEC}", hint=_remote_hint(remote))
    except GitError:
        _refuse_broken(layout, "fetched")
        raise
    after = _refs(layout)
    new = len(after.keys() - before.keys())
    moved = sum(1 for ref in after.keys() & before.keys() if after[ref] != before[ref])
    merged = _merge_notes(layout, remote)
    said = []
    if new or moved:
        said.append(f"{new} new checkpoint(s)" + (f", {moved} updated" if moved else ""))
    if merged:
        said.append("notes merged (ours kept where both had one)")
    return "; ".join(said) or "up to date"


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
