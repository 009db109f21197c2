"""What `push` and `fetch` report, as data (`nexusd checkpoint push|fetch --json`)."""

from __future__ import annotations

from nexusd.checkpoint.remote import Fetched, PushedRef, pushed_refs

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
    assert fetched.to_dict() == {"new": ["c2"], "updated": ["c1"], "notes_merged": True}
    assert Fetched((), (), False).summary() == "up to date"
