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


def test_a_commit_in_a_worktree_is_still_checkpointed_by_the_main_daemon(
    served: Path, start_daemon: Callable[..., Path], tmp_path: Path
) -> None:
    # Hooks are shared by every worktree, so their inbox is too: any daemon handles it.
    nexusd(served, "hooks", "install")
    wt = tmp_path / "wt"
    git(served, "worktree", "add", "-q", "-b", "side", str(wt))
    start_daemon(served)
    (wt / "side.txt").write_text("side\n", encoding="utf-8")
    git(wt, "add", "side.txt")
    git(wt, "commit", "-qm", "side")

    def side_checkpoint() -> list[object]:
        layout = find_repo(served)
        return [c for c in list_checkpoints(layout) if c.reason == "commit" and c.branch == "side"]

    wait_until(side_checkpoint, what="the worktree commit's checkpoint")
