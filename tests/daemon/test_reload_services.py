"""After a reload the daemon answers with the services the new configuration names: the git
hooks' events go to those services, never to the ones the old configuration started."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import git

from daemon.helpers import nexusd, published, wait_until, write_config
from nexusd.memory.store import MemoryStore
from nexusd.paths import find_repo

MEMORY = "# Memory\n\n## Lessons\n\n- Keep the courier pings jittered.\n"
# A model directory that does not exist: memory runs keyword-only, and no model is loaded.
MEMORY_ON = "memory:\n  enabled: true\n  model: /nonexistent/embedding-model\n"
# Neither memory nor the code index: no service is left for a post-checkout event.
BOTH_OFF = "memory:\n  enabled: false\ncode:\n  enabled: false\n"


def _indexed(repo: Path) -> set[str]:
    """The content hashes of the chunks in the memory index (read by this process)."""
    store = MemoryStore(str(find_repo(repo).index_dir))
    store.open(None)
    return {sha for _path, sha, _model in store.meta().values()}


def _drained(repo: Path) -> bool:
    inbox = find_repo(repo).inbox_dir
    return not list(inbox.glob("*.jsonl")) and not list(inbox.glob("claimed/*.jsonl"))


def test_hook_events_after_memory_is_turned_off_leave_the_index_alone(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    (served / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    write_config(served, MEMORY_ON)
    git(served, "add", "-A")
    git(served, "commit", "-q", "-m", "memory")
    start_daemon(served, "--timeout", "60")
    nexusd(served, "hooks", "install")
    before = wait_until(lambda: _indexed(served), what="MEMORY.md in the index")

    write_config(served, BOTH_OFF)
    wait_until(lambda: published(served).get("config_reloaded_at"), what="the reload")
    with (served / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("- Never reconcile memory the configuration turned off.\n")
    git(served, "checkout", "-q", "-b", "feature")  # post-checkout: the hooks' resync event
    wait_until(lambda: _drained(served), what="the post-checkout event handled")

    # Memory is off: nothing synced the new lesson into the index.
    assert _indexed(served) == before
    assert published(served)["config_error"] is None
