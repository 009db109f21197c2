from __future__ import annotations

from pathlib import Path

from nexusd.context.gitfacts import _parse_status, collect_git_facts
from tests.conftest import git
from tests.plan_helpers import kitchen_repo


def test_branch_head_and_clean_tree(repo: Path) -> None:
    facts = collect_git_facts(repo)
    assert facts.branch == "main"
    assert facts.head == git(repo, "rev-parse", "HEAD").strip()
    assert facts.head_subject == "initial commit"
    assert facts.dirty == ()
    assert not facts.detached
    assert facts.error is None


def test_dirty_files_staged_modified_untracked_renamed(repo: Path) -> None:
    kitchen_repo(repo)
    (repo / "README.md").write_text("# changed\n")  # modified, unstaged
    (repo / "new.txt").write_text("new\n")  # untracked
    (repo / ".scratchpad_logs").mkdir(exist_ok=True)  # nexusd's own files: not counted
    (repo / ".scratchpad_logs" / "1_plan_request.md").write_text("# Goal\n")
    (repo / "staged.py").write_text("x = 1\n")
    git(repo, "add", "staged.py")  # added
    git(repo, "mv", "kitchen/courier.py", "kitchen/carrier.py")  # renamed
    facts = collect_git_facts(repo)
    by_path = {d.path: d.code for d in facts.dirty}
    assert by_path["README.md"] == " M"
    assert by_path["new.txt"] == "??"
    assert by_path["staged.py"] == "A "
    assert by_path["kitchen/carrier.py"] == "R "
    assert facts.dirty_total == len(facts.dirty) == 4


def test_nexusd_own_files_are_not_the_users_changes(repo: Path) -> None:
    # What `nexusd init` and the daemon write: its folder, MEMORY.md, a daily note.
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text("version: 1\n")
    (repo / "MEMORY.md").write_text("# Memory\n")
    (repo / "memory" / "daily").mkdir(parents=True)
    (repo / "memory" / "daily" / "2026-11-26.md").write_text("# Notes\n")
    assert collect_git_facts(repo).dirty == ()
    # A file of the user's beside them still counts; so do nexusd's own files when the
    # caller configures others.
    (repo / "memory" / "plan.txt").write_text("mine\n")
    assert [d.path for d in collect_git_facts(repo).dirty] == ["memory/"]
    facts = collect_git_facts(repo, own=[".nexus", "../elsewhere", "/abs", ""])
    assert {d.path for d in facts.dirty} == {"MEMORY.md", "memory/"}
    assert facts.error is None


def test_detached_head(repo: Path) -> None:
    kitchen_repo(repo)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    facts = collect_git_facts(repo)
    assert facts.branch is None
    assert facts.detached
    assert facts.head_subject == "add kitchen shelves"


def test_repository_without_commits(make_repo) -> None:  # type: ignore[no-untyped-def]
    root = make_repo("empty", commit=False)
    (root / "a.py").write_text("pass\n")
    facts = collect_git_facts(root, ["a.py"])
    assert facts.head is None
    assert facts.branch == "main"
    assert facts.recent == {}
    assert [d.path for d in facts.dirty] == ["a.py"]


def test_recent_commits_per_artifact(repo: Path) -> None:
    kitchen_repo(repo)
    facts = collect_git_facts(
        repo, ["kitchen/courier.py", "kitchen/shelves.py", "kitchen", "nope.py"]
    )
    courier = [c.subject for c in facts.recent["kitchen/courier.py"]]
    assert courier == ["courier returns nothing", "add kitchen shelves"]
    assert [c.subject for c in facts.recent["kitchen/shelves.py"]] == ["add kitchen shelves"]
    # A folder collects the commits of the files inside it.
    assert len(facts.recent["kitchen"]) == 2
    assert facts.recent["nope.py"] == ()
    assert all(len(c.sha) >= 7 and c.date for c in facts.recent["kitchen"])


def test_not_a_repository_reports_error(tmp_path: Path) -> None:
    facts = collect_git_facts(tmp_path)
    assert facts.error
    assert facts.head is None


def test_parse_status_handles_unmerged_and_initial() -> None:
    out = (
        b"# branch.oid (initial)\0# branch.head main\0"
        b"u UU N... 100644 100644 100644 100644 a b c conflict.py\0? x y.txt\0"
    )
    branch, head, dirty = _parse_status(out)
    assert (branch, head) == ("main", None)
    assert [(d.code, d.path) for d in dirty] == [("UU", "conflict.py"), ("??", "x y.txt")]
