"""Share checkpoints and their notes with a remote (`refs/nexus/*` and `refs/notes/nexus`)."""

from __future__ import annotations

from nexusd.checkpoint.model import NOTES_REF
from nexusd.git import run_git, try_git_text
from nexusd.paths import RepoLayout

REFSPEC = "refs/nexus/*:refs/nexus/*"


def push(layout: RepoLayout, remote: str) -> str:
    """Push every checkpoint ref and the notes to `remote`; return git's report."""
    specs = [f"+{REFSPEC}"]
    if try_git_text(layout.root, "rev-parse", "-q", "--verify", NOTES_REF):
        specs.append(f"+{NOTES_REF}:{NOTES_REF}")
    out = run_git(layout.root, "push", "--porcelain", remote, *specs)
    return out.decode("utf-8", "replace").strip()


def fetch(layout: RepoLayout, remote: str) -> str:
    """Fetch checkpoint refs (never pruning local ones) and merge-free note updates."""
    proc = run_git(layout.root, "fetch", remote, f"+{REFSPEC}")
    # Notes are fetched only when the remote has them; a missing notes ref is not an error.
    run_git(layout.root, "fetch", remote, f"+{NOTES_REF}:{NOTES_REF}", check=False)
    return proc.decode("utf-8", "replace").strip()
