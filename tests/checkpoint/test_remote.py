"""What `push` and `fetch` report, as data (`nexusd checkpoint push|fetch --json`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nexusd.checkpoint.notes import attach_note
from nexusd.checkpoint.remote import Fetched, PushedRef, fetch_checkpoints, pushed_refs
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.paths import find_repo

from .gitutil import git

# `git push --porcelain` as git 2.x prints it: a fast-forward's flag is a space.
REPORT = """\
To ../r.git
 \trefs/nexus/checkpoints/c1:refs/nexus/checkpoints/c1\t12abba6..3ae0bf0
*\trefs/nexus/checkpoints/c2:refs/nexus/checkpoints/c2\t[new reference]
=\trefs/notes/nexus:refs/notes/nexus\t[up to date]
+\trefs/nexus/checkpoints/c3:refs/nexus/checkpoints/c3\t3ae0bf0...12abba6 (forced update)
!\trefs/notes/nexus:refs/notes/nexus\t[rejected] (fetch first)
Done"""


def test_each_ref_of_a_push_report_with_what_happened() -> None:
    refs = pushed_refs(REPORT)
    assert [(r.id, r.status) for r in refs] == [
        ("c1", "updated"),
        ("c2", "new"),
        (None, "up_to_date"),
        ("c3", "forced"),
        (None, "rejected"),
    ]
    assert refs[0] == PushedRef("refs/nexus/checkpoints/c1", "updated", "12abba6..3ae0bf0")
    assert refs[2].to_dict() == {
        "ref": "refs/notes/nexus",
        "id": None,
        "status": "up_to_date",
        "summary": "[up to date]",
    }
    assert pushed_refs("") == []


def test_a_fetch_says_what_changed_in_a_line_and_as_data() -> None:
    fetched = Fetched(("refs/nexus/checkpoints/c2",), ("refs/nexus/checkpoints/c1",), True)
    assert fetched.summary() == (
        "1 new checkpoint(s), 1 updated; notes merged (ours kept where both had one)"
    )
    assert fetched.to_dict() == {
        "new": [{"ref": "refs/nexus/checkpoints/c2", "id": "c2"}],
        "updated": [{"ref": "refs/nexus/checkpoints/c1", "id": "c1"}],
        "notes_merged": True,
    }
    other = Fetched(("refs/nexus/x",), (), False)
    assert other.to_dict()["new"] == [{"ref": "refs/nexus/x", "id": None}]
    assert other.summary() == "other refs under refs/nexus/: 1 new"
    assert Fetched((), (), False).summary() == "up to date"


def test_a_fetch_tells_checkpoints_from_the_other_refs_it_brings(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    theirs = make_repo("theirs")
    them = find_repo(theirs)
    first = create_checkpoint(them, reason="manual")
    attach_note(them, first.id, {"status": "passed"})
    # The refspec, refs/nexus/*, brings every ref under refs/nexus/, not only checkpoints.
    git(theirs, "update-ref", "refs/nexus/other/marker", first.commit)
    git(tmp_path, "clone", "-q", str(theirs), "ours")  # a clone has no refs/nexus/ yet
    ours = find_repo(tmp_path / "ours")
    fetched = fetch_checkpoints(ours, "origin")
    assert fetched.to_dict() == {
        "new": [
            {"ref": first.ref, "id": first.id},
            {"ref": "refs/nexus/other/marker", "id": None},  # not a checkpoint: no id
        ],
        "updated": [],
        "notes_merged": True,  # the notes ref is merged, never listed
    }
    assert fetched.summary() == (
        "1 new checkpoint(s); other refs under refs/nexus/: 1 new;"
        " notes merged (ours kept where both had one)"
    )
    (theirs / "a.txt").write_text("a\n")
    second = create_checkpoint(them, reason="manual")
    git(theirs, "update-ref", "refs/nexus/other/marker", second.commit)
    fetched = fetch_checkpoints(ours, "origin")
    assert fetched.to_dict() == {
        "new": [{"ref": second.ref, "id": second.id}],
        "updated": [{"ref": "refs/nexus/other/marker", "id": None}],
        "notes_merged": False,
    }
    assert fetched.summary() == (
        "1 new checkpoint(s); other refs under refs/nexus/: 0 new, 1 updated"
    )
    assert fetch_checkpoints(ours, "origin").summary() == "up to date"
