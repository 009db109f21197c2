"""One daemon per working tree: a daemon in a linked worktree never blocks the main checkout."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from daemon.helpers import nexusd, request_text, wait_answered, wait_until
from nexusd.checkpoint.listing import list_checkpoints
from nexusd.paths import find_repo
from tests.conftest import git


def _status(where: Path) -> tuple[int, dict[str, object]]:
    proc = nexusd(where, "status", "--json", check=False)
    return proc.returncode, json.loads(proc.stdout)


def test_a_worktree_daemon_and_the_main_one_each_serve_their_own_tree(
    served: Path, start_daemon: Callable[..., Path], tmp_path: Path
) -> None:
    wt = tmp_path / "wt"
    git(served, "worktree", "add", "-q", "-b", "side", str(wt))
    (wt / ".scratchpad_logs").mkdir(exist_ok=True)
    start_daemon(wt)

    # The main checkout has no daemon: status says so (it said "running" before).
    code, main_status = _status(served)
    assert (code, main_status["running"]) == (7, False), main_status
    start_daemon(served)
    code, main_status = _status(served)
    _, wt_status = _status(wt)
    assert code == 0 and main_status["running"] and wt_status["running"]
    assert main_status["pid"] != wt_status["pid"]

    in_main = served / ".scratchpad_logs" / "2025-04-20T08_11_37_plan_request.md"
    in_wt = wt / ".scratchpad_logs" / "2025-04-20T09_00_00_plan_request.md"
    in_main.write_text(request_text("Explain the README"), encoding="utf-8")
    in_wt.write_text(request_text("Explain the README in the worktree"), encoding="utf-8")
    assert wait_answered(in_main)["status"] == "ok"
    assert wait_answered(in_wt)["status"] == "ok"
    # Each tree's state sits under its own git directory.
    assert (served / ".git" / "nexus" / "nexusd.pid").exists()
    assert find_repo(wt).nexus_dir == served / ".git" / "worktrees" / "wt" / "nexus"
    assert find_repo(wt).pidfile.exists()


def _daily(root: Path) -> str:
    """Every daily note of one checkout, concatenated (a test may cross midnight)."""
    return "".join(p.read_text(encoding="utf-8") for p in sorted(root.glob("memory/daily/*.md")))


def _commit(where: Path, name: str) -> str:
    (where / name).write_text(f"{name}\n", encoding="utf-8")
    git(where, "add", name)
    git(where, "commit", "-qm", name)
    return git(where, "rev-parse", "HEAD").strip()[:12]


def test_each_commit_is_handled_by_the_daemon_of_its_own_worktree(
    served: Path, start_daemon: Callable[..., Path], tmp_path: Path
) -> None:
    # Hooks are shared by every worktree, so their inbox is too; its events are not.
    nexusd(served, "hooks", "install")
    wt = tmp_path / "wt"
    git(served, "worktree", "add", "-q", "-b", "side", str(wt))
    (wt / ".scratchpad_logs").mkdir(exist_ok=True)
    start_daemon(served)

    side = _commit(wt, "side.txt")
    main = _commit(served, "main.txt")
    wait_until(lambda: main in _daily(served), what="the main commit in the main daily note")
    # The main daemon drained both events and left the worktree's for its own daemon.
    assert side not in _daily(served)
    assert _daily(wt) == ""
    waiting = [p.read_text() for p in find_repo(served).inbox_dir.glob("*.jsonl")]
    assert any('"post-commit"' in text for text in waiting), waiting

    start_daemon(wt)
    wait_until(lambda: side in _daily(wt), what="the worktree commit in its own daily note")
    assert side not in _daily(served) and main not in _daily(wt)

    def side_checkpoint() -> list[object]:
        layout = find_repo(served)
        return [c for c in list_checkpoints(layout) if c.reason == "commit" and c.branch == "side"]

    wait_until(side_checkpoint, what="the worktree commit's checkpoint")

    # With both daemons running, each still takes only its own tree's commits.
    side2, main2 = _commit(wt, "side2.txt"), _commit(served, "main2.txt")
    wait_until(lambda: side2 in _daily(wt), what="the second worktree commit")
    wait_until(lambda: main2 in _daily(served), what="the second main commit")
    assert side2 not in _daily(served) and main2 not in _daily(wt)
