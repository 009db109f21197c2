"""The hook inbox: real hooks enqueue, each event is handled once, crashes lose nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from nexusd.checkpoint.listing import list_checkpoints
from nexusd.config import Config, config_from_mapping
from nexusd.daemon import inbox
from nexusd.hooks.installer import install
from nexusd.paths import RepoLayout, find_repo


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


class Recorder:
    """A handler table that records handled events (post-commit still makes its checkpoint)."""

    def __init__(self) -> None:
        self.seen: list[inbox.InboxEvent] = []
        self.handlers: dict[str, inbox.Handler] = {
            "post-merge": self._record,
            "post-checkout": self._record,
            "post-commit": self._commit_then_record,
        }

    def _record(self, layout: RepoLayout, config: Config, event: inbox.InboxEvent) -> None:
        self.seen.append(event)

    def _commit_then_record(
        self, layout: RepoLayout, config: Config, event: inbox.InboxEvent
    ) -> None:
        inbox.DEFAULT_HANDLERS["post-commit"](layout, config, event)
        self.seen.append(event)


@pytest.fixture
def recorded() -> Recorder:
    return Recorder()


def claimed_events(layout: RepoLayout) -> list[inbox.InboxEvent]:
    """Claim every queued file and read its events, handling none (a drain that dies)."""
    return [event for path in inbox.claim(layout) for event in inbox.read_events(path)]


def dead_letters(layout: RepoLayout) -> list[dict[str, Any]]:
    """The dead letters the drain wrote, oldest first."""
    folder = layout.inbox_dir / "dead"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def test_real_hooks_enqueue_and_drain_once(repo: Path, recorded: Recorder) -> None:
    layout = find_repo(repo)
    install(layout)
    (repo / "f.txt").write_text("1")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", "one")
    git(repo, "checkout", "-q", "-b", "feature")
    files = sorted(layout.inbox_dir.glob("*.jsonl"))
    assert [f.name.split(".")[0] for f in files] == ["post-commit", "post-checkout"] or sorted(
        f.name.split(".")[0] for f in files
    ) == ["post-checkout", "post-commit"]
    line = json.loads(next(f for f in files if f.name.startswith("post-commit")).read_text())
    assert line["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert Path(line["worktree"]) == repo

    config = config_from_mapping({})
    assert inbox.drain_and_handle(layout, config, recorded.handlers) == 2
    assert {e.hook for e in recorded.seen} == {"post-commit", "post-checkout"}
    checkout = next(e for e in recorded.seen if e.hook == "post-checkout")
    assert len(checkout.args) == 3 and checkout.args[2] == "1"
    cps = list_checkpoints(layout)
    assert [c.reason for c in cps] == ["commit"]
    assert cps[0].trailers["Nexus-Commit"] == line["head"]
    assert inbox.drain_and_handle(layout, config, recorded.handlers) == 0
    assert len(recorded.seen) == 2
    assert list(layout.inbox_dir.glob("*.jsonl")) == []
    assert list((layout.inbox_dir / "claimed").iterdir()) == []


def test_on_commit_false_makes_no_checkpoint(repo: Path) -> None:
    layout = find_repo(repo)
    install(layout)
    (repo / "g.txt").write_text("1")
    git(repo, "add", "g.txt")
    git(repo, "commit", "-qm", "g")
    config = config_from_mapping({"checkpoint": {"on_commit": False}})
    assert inbox.drain_and_handle(layout, config) == 1
    assert list_checkpoints(layout) == []


def test_crash_between_claim_and_handle_reprocesses(repo: Path, recorded: Recorder) -> None:
    layout = find_repo(repo)
    install(layout)
    git(repo, "checkout", "-q", "-b", "x")
    events = claimed_events(layout)  # claimed, then "the process dies" before handling
    assert [e.hook for e in events] == ["post-checkout"]
    assert list(layout.inbox_dir.glob("*.jsonl")) == []
    assert inbox.drain_and_handle(layout, config_from_mapping({}), recorded.handlers) == 1
    assert [e.hook for e in recorded.seen] == ["post-checkout"]
    assert inbox.drain_and_handle(layout, config_from_mapping({}), recorded.handlers) == 0


def test_failing_handler_goes_to_dead_letters(repo: Path) -> None:
    layout = find_repo(repo)

    def boom(layout: object, config: object, event: inbox.InboxEvent) -> None:
        raise RuntimeError("handler broke")

    inbox.enqueue(layout, inbox.InboxEvent(hook="post-merge", args=("0",)))
    assert inbox.drain_and_handle(layout, config_from_mapping({}), {"post-merge": boom}) == 0
    dead = dead_letters(layout)
    assert len(dead) == 1
    assert "handler broke" in dead[0]["error"]
    assert json.loads(dead[0]["event"])["hook"] == "post-merge"
    assert list(layout.inbox_dir.glob("*.jsonl")) == []  # buried, not retried forever


def test_partial_and_garbage_files(repo: Path) -> None:
    layout = find_repo(repo)
    layout.inbox_dir.mkdir(parents=True)
    (layout.inbox_dir / "post-commit.1.0.jsonl").write_text('{"v":1,"hook":"post-co')
    (layout.inbox_dir / "junk.2.0.jsonl").write_text("not json\n")
    events = claimed_events(layout)
    assert events == []  # the partial one waits for its writer, the junk is a dead letter
    assert (layout.inbox_dir / "post-commit.1.0.jsonl").exists()
    assert "unreadable" in dead_letters(layout)[0]["error"]


def test_abandoned_partial_files_become_dead_letters(repo: Path) -> None:
    layout = find_repo(repo)
    layout.inbox_dir.mkdir(parents=True)
    partial = layout.inbox_dir / "post-commit.1.0.jsonl"
    empty = layout.inbox_dir / "post-commit.2.0.jsonl"
    partial.write_text('{"v":1,"hook":"post-co')
    empty.write_text("")
    old = 1_600_000_000
    for path in (partial, empty):
        os.utime(path, (old, old))
    assert claimed_events(layout) == []
    assert not partial.exists() and not empty.exists()
    dead = dead_letters(layout)
    assert [d["error"] for d in dead] == ["incomplete line"]
    assert dead[0]["event"] == '{"v":1,"hook":"post-co'


def test_many_commits_coalesce_into_one_checkpoint(repo: Path) -> None:
    layout = find_repo(repo)
    install(layout)
    for i in range(4):
        (repo / f"f{i}").write_text(str(i))
        git(repo, "add", f"f{i}")
        git(repo, "commit", "-qm", f"c{i}")
    assert len(list(layout.inbox_dir.glob("post-commit.*.jsonl"))) == 4
    assert inbox.drain_and_handle(layout, config_from_mapping({})) == 4
    cps = list_checkpoints(layout)
    assert len(cps) == 1
    assert cps[0].trailers["Nexus-Commit"] == git(repo, "rev-parse", "HEAD").strip()


def test_concurrent_hook_runs_never_mix_lines(repo: Path) -> None:
    layout = find_repo(repo)
    install(layout)
    hook = layout.git_common_dir / "hooks" / "post-merge"
    procs = [
        subprocess.Popen([str(hook), "0"], cwd=repo, stdout=subprocess.DEVNULL) for _ in range(20)
    ]
    for proc in procs:
        assert proc.wait() == 0
    seen: list[inbox.InboxEvent] = []
    table = {"post-merge": lambda layout, config, event: seen.append(event)}
    files = sorted(layout.inbox_dir.glob("*.jsonl"))
    events = [e for path in files for e in inbox.read_events(path)]
    assert len(events) == 20
    assert all(e.hook == "post-merge" and e.args == ("0",) for e in events)
    # All 20 are drained; post-merge events coalesce into the newest one per worktree.
    assert inbox.drain_and_handle(layout, config_from_mapping({}), table) == 20
    assert len(seen) == 1
    assert list((layout.inbox_dir / "claimed").iterdir()) == []


def test_linked_worktree_commit_waits_for_that_worktrees_drain(repo: Path, tmp_path: Path) -> None:
    layout = find_repo(repo)
    install(layout)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "side.txt").write_text("side\n")
    git(wt, "add", "side.txt")
    git(wt, "commit", "-qm", "side")
    (wt / "dirty.txt").write_text("uncommitted\n")
    # The main checkout's drain leaves the worktree's events (checkout, commit) in place.
    assert inbox.drain_and_handle(layout, config_from_mapping({})) == 0
    assert len(list(layout.inbox_dir.glob("post-commit.*.jsonl"))) == 1
    assert inbox.drain_and_handle(find_repo(wt), config_from_mapping({})) == 2
    cps = [c for c in list_checkpoints(layout) if c.reason == "commit"]
    assert len(cps) == 1
    assert cps[0].branch == "side"
    assert "dirty.txt" in git(repo, "ls-tree", "-r", "--name-only", cps[0].commit)
    assert list(layout.inbox_dir.glob("*.jsonl")) == []


def test_events_go_to_their_worktree_whoever_claimed_them(
    repo: Path, tmp_path: Path, recorded: Recorder
) -> None:
    layout = find_repo(repo)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    wt_layout = find_repo(wt)
    gone = tmp_path / "gone"
    git(repo, "worktree", "add", "-q", "-b", "gone", str(gone))
    git(repo, "worktree", "remove", str(gone))
    legacy = inbox.InboxEvent(hook="post-merge", args=("legacy",))
    side = inbox.InboxEvent(hook="post-merge", args=("side",), worktree=str(wt))
    removed = inbox.InboxEvent(hook="post-merge", args=("removed",), worktree=str(gone))
    # One file holding every kind, claimed by a drain that died before handling it.
    layout.inbox_dir.mkdir(parents=True)
    (layout.inbox_dir / "mixed.1.0.jsonl").write_text(
        "".join(e.to_json() + "\n" for e in (legacy, side, removed))
    )
    inbox.claim(layout)
    # A worktree takes only its own event; the rest waits for the main checkout.
    assert inbox.drain_and_handle(wt_layout, config_from_mapping({}), recorded.handlers) == 1
    assert [e.args for e in recorded.seen] == [("side",)]
    # The main checkout handles the event without a worktree, drops the removed one's.
    assert inbox.drain_and_handle(layout, config_from_mapping({}), recorded.handlers) == 2
    assert [e.args for e in recorded.seen] == [("side",), ("legacy",)]
    assert inbox.drain_and_handle(layout, config_from_mapping({}), recorded.handlers) == 0
    assert inbox.drain_and_handle(wt_layout, config_from_mapping({}), recorded.handlers) == 0
    assert list(layout.inbox_dir.glob("*.jsonl")) == []
    assert list((layout.inbox_dir / "claimed").iterdir()) == []


DRAINER = """
import sys
from pathlib import Path
from nexusd.config import Config, config_from_mapping
from nexusd.daemon import inbox
from nexusd.paths import RepoLayout, find_repo

out = Path(sys.argv[2])

def record(layout, config, event):
    with out.open("a") as fh:
        fh.write(event.args[0] + "\\n")

table = {"test-event": record}
layout = find_repo(Path(sys.argv[1]))
stop = Path(sys.argv[3])
while not stop.exists():
    inbox.drain_and_handle(layout, config_from_mapping({}), table)
inbox.drain_and_handle(layout, config_from_mapping({}), table)
"""


def test_concurrent_drainers_handle_each_event_once(repo: Path, tmp_path: Path) -> None:
    layout = find_repo(repo)
    out, stop = tmp_path / "handled.txt", tmp_path / "stop"
    procs = [
        subprocess.Popen([sys.executable, "-c", DRAINER, str(repo), str(out), str(stop)])
        for _ in range(3)
    ]
    # Events arrive while three processes keep draining at the same time.
    for i in range(60):
        inbox.enqueue(layout, inbox.InboxEvent(hook="test-event", args=(str(i),)))
        time.sleep(0.01)
    stop.write_text("")
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    handled = out.read_text().split()
    assert sorted(handled, key=int) == [str(i) for i in range(60)]
