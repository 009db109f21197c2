"""Listing, resolving, dropping; notes; retention; push and fetch."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexusd.checkpoint.listing import drop, files_changed, list_checkpoints, resolve
from nexusd.checkpoint.model import Checkpoint, id_time, make_id
from nexusd.checkpoint.notes import attach_note, check_status, read_note
from nexusd.checkpoint.overview import overview
from nexusd.checkpoint.remote import fetch, push
from nexusd.checkpoint.retention import RetentionPolicy, plan_gc, run_gc
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.config import config_from_mapping
from nexusd.errors import GitError
from nexusd.paths import find_repo
from nexusd.protocol.naming import kept_response_name

from .gitutil import git


def test_ids_sort_by_time() -> None:
    t0 = datetime(2026, 11, 22, 4, 15, 1, 5, tzinfo=UTC)
    ids = [make_id(t0 + timedelta(microseconds=m)) for m in (0, 1, 999_000, 1_000_000)]
    assert ids == sorted(ids)
    assert ids[0] == "20261122T041501Z-000005"
    assert id_time(ids[2]) == t0 + timedelta(microseconds=999_000)


def test_list_files_changed_resolve_and_drop(repo: Path) -> None:
    layout = find_repo(repo)
    (repo / "one.txt").write_text("1")
    first = create_checkpoint(layout, reason="manual", trailers={"cycle": "2"})
    (repo / "two.txt").write_text("2")
    second = create_checkpoint(layout, reason="request")
    listed = list_checkpoints(layout)
    assert [c.id for c in listed] == [first.id, second.id]
    assert listed[0].cycle == "2"
    assert files_changed(layout, listed) == {first.id: 1, second.id: 2}
    assert resolve(layout, "latest").id == second.id
    assert resolve(layout, second.ref).id == second.id
    drop(layout, first)
    assert [c.id for c in list_checkpoints(layout)] == [second.id]
    with pytest.raises(GitError, match="no checkpoint"):
        resolve(layout, first.id)


def test_notes_merge_and_show_in_overview(repo: Path) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="request")
    attach_note(layout, cp.id, {"status": "failed", "checks": {"lint": "passed"}})
    attach_note(layout, cp.commit, {"status": "passed", "checks": {"tests": "passed"}})
    note = read_note(layout, cp.id)
    assert note == {"status": "passed", "checks": {"lint": "passed", "tests": "passed"}}
    assert git(repo, "notes", "--ref=refs/notes/nexus", "list").split()[1] == cp.commit
    row = overview(layout)[0]
    assert row["checks"] == "passed"
    assert row["id"] == cp.id


def test_yaml_note_is_read(repo: Path) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="request")
    git(repo, "notes", "--ref=refs/notes/nexus", "add", "-m", "status: failed\n", cp.commit)
    assert check_status(read_note(layout, cp.id)) == "failed"


def _cp(when: datetime) -> Checkpoint:
    cid = make_id(when)
    return Checkpoint(id=cid, commit="0" * 40, tree="0" * 40, created_at=when, reason="request")


def test_plan_gc_policy() -> None:
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    # Ten checkpoints a day for 30 days, newest first in time.
    cps = [_cp(now - timedelta(days=d, hours=h)) for d in range(30) for h in range(0, 10)]
    policy = RetentionPolicy(keep_last=5, keep_days=3, daily_beyond=True)
    old_named = cps[-1].id
    old_passed = cps[-15].id
    keep, dropped = plan_gc(cps, policy, now, named_ids=[old_named], passed_ids=[old_passed])
    kept = {c.id for c in keep}
    assert len(keep) + len(dropped) == len(cps)
    assert {c.id for c in sorted(cps, key=lambda c: c.created_at)[-5:]} <= kept
    assert all(c.id in kept for c in cps if c.created_at >= now - timedelta(days=3))
    assert old_named in kept and old_passed in kept
    old_days = {c.created_at.date() for c in keep if c.created_at < now - timedelta(days=3)}
    assert len(old_days) == len(
        {c.created_at.date() for c in cps if c.created_at < now - timedelta(days=3)}
    )
    per_day: dict[object, int] = {}
    for c in keep:
        if c.created_at < now - timedelta(days=3) and c.id not in (old_named, old_passed):
            per_day[c.created_at.date()] = per_day.get(c.created_at.date(), 0) + 1
    assert max(per_day.values()) == 1
    none_kept, _ = plan_gc(cps, RetentionPolicy(0, 0, False, False, False), now)
    assert none_kept == []


def test_run_gc_keeps_passed_and_named(repo: Path) -> None:
    layout = find_repo(repo)
    old = datetime.now(UTC) - timedelta(days=40)
    made = [
        create_checkpoint(layout, reason="request", now=old + timedelta(minutes=i))
        for i in range(4)
    ]
    attach_note(layout, made[0].id, {"status": "passed"})
    logs = repo / ".scratchpad_logs"
    logs.mkdir()
    (logs / "2026-01-01_plan_response.md").write_text(
        f"---\ncheckpoint: {made[1].id}\n---\nrestore: nexusd checkpoint restore {made[1].id}\n"
    )
    # A response someone edited, kept aside when its request was answered again
    # (planner/response_file.py): the checkpoint it names is still someone's.
    kept = kept_response_name(logs / "2026-01-02_plan_response.md", old)
    (logs / kept).write_text(f"---\ncheckpoint: {made[2].id}\n---\nmy notes\n")
    config = config_from_mapping(
        {"checkpoint": {"retention": {"keep_last": 0, "keep_days": 1, "daily_beyond": False}}}
    )
    report = run_gc(layout, config, dry_run=True)
    assert set(report.kept) == {made[0].id, made[1].id, made[2].id}
    assert len(list_checkpoints(layout)) == 4
    report = run_gc(layout, config)
    assert {c.id for c in list_checkpoints(layout)} == {made[0].id, made[1].id, made[2].id}
    assert set(report.dropped) == {made[3].id}


def test_push_and_fetch(repo: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="manual")
    attach_note(layout, cp.id, {"status": "passed"})
    push(layout, "origin")
    assert cp.commit in git(remote, "for-each-ref", "refs/nexus/")
    other = make_repo("other")
    git(other, "remote", "add", "origin", str(remote))
    other_layout = find_repo(other)
    fetch(other_layout, "origin")
    assert [c.id for c in list_checkpoints(other_layout)] == [cp.id]
    assert read_note(other_layout, cp.id) == {"status": "passed"}
    with pytest.raises(GitError):
        fetch(other_layout, "no-such-remote")
    with pytest.raises(GitError, match="git push --porcelain no-such-remote"):
        push(other_layout, "no-such-remote")


def test_notes_are_merged_both_ways_never_replaced(
    repo: Path, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    remote = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    a = find_repo(repo)
    first = create_checkpoint(a, reason="manual")
    attach_note(a, first.id, {"status": "passed"})
    push(a, "origin")
    other = make_repo("other")
    git(other, "remote", "add", "origin", str(remote))
    b = find_repo(other)
    mine = create_checkpoint(b, reason="manual")
    attach_note(b, mine.id, {"status": "failed"})
    # A fetch says what came, and keeps this repository's own results.
    assert fetch(b, "origin").startswith("1 new checkpoint(s)")
    assert read_note(b, mine.id) == {"status": "failed"}
    assert read_note(b, first.id) == {"status": "passed"}
    assert fetch(b, "origin") == "up to date"
    # Pushing b's notes (now holding a's too) fast-forwards the remote's; a's stay there.
    push(b, "origin")
    third = create_checkpoint(a, reason="manual")
    attach_note(a, third.id, {"status": "passed"})
    # a's notes lack b's result: pushing them would erase it, so they are not pushed.
    with pytest.raises(GitError, match="fetch origin"):
        push(a, "origin")
    fetch(a, "origin")
    push(a, "origin")
    fetch(b, "origin")
    assert {read_note(b, c.id)["status"] for c in (first, mine, third)} == {"passed", "failed"}


@pytest.mark.parametrize("levels", [65, 600, 1000, 100_000])
@pytest.mark.parametrize("form", ["json", "yaml"])
def test_a_note_nested_deeper_than_nexusd_writes_is_kept_as_text(
    repo: Path, levels: int, form: str
) -> None:
    # A fetched note nested 600 levels and more was an uncaught RecursionError.
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="request")
    if form == "json":
        text = '{"a": ' * levels + "1" + "}" * levels
    else:
        text = "a: " + "[" * levels + "]" * levels
    note = repo.parent / "note.txt"
    note.write_text(text + "\n")  # a file: 100,000 levels are too long for an argument
    git(repo, "notes", "--ref=refs/notes/nexus", "add", "-F", str(note), cp.commit)
    assert read_note(layout, cp.id) == {"text": text}
    attach_note(layout, cp.id, {"status": "passed"})  # merged beside it, nothing lost
    assert read_note(layout, cp.id) == {"text": text, "status": "passed"}
    assert check_status(read_note(layout, cp.id)) == "passed"


def test_a_note_nested_as_deep_as_nexusd_reads_is_a_mapping(repo: Path) -> None:
    layout = find_repo(repo)
    cp = create_checkpoint(layout, reason="request")
    text = '{"a": ' * 64 + "1" + "}" * 64
    git(repo, "notes", "--ref=refs/notes/nexus", "add", "-m", text, cp.commit)
    assert isinstance(read_note(layout, cp.id)["a"], dict)
