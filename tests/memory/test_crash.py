"""kill -9 in the middle of a sync, restart: the index matches the markdown again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import nexusd
from nexusd.memory.embedder import Embedder
from nexusd.memory.service import MemoryService
from tests.memory.conftest import write

pytestmark = [pytest.mark.model, pytest.mark.slow]

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from nexusd.config import load_config
    from nexusd.memory import sync
    from nexusd.memory.service import MemoryService
    from nexusd.paths import find_repo

    sync.COMMIT_ROWS = 16  # many small commits, so the kill lands between two of them
    layout = find_repo(Path(sys.argv[1]))
    service = MemoryService(layout, load_config(layout.root))
    service.embedder.load()
    service.open()
    print("syncing", flush=True)
    service.reconcile()
    print("done", flush=True)
    """
)


def _rows(index: Path) -> int:
    import lancedb

    try:
        return int(lancedb.connect(str(index)).open_table("chunks").count_rows())
    except Exception:
        return 0


def test_kill_9_during_sync_then_restart_matches_markdown(
    repo: Path, make_service: Callable[..., MemoryService], embedder: Embedder
) -> None:
    for day in range(1, 16):
        sections = "".join(
            f"## {h:02d}:00 cycle {h}\n\nDay {day} hour {h}: worked on item {day * 100 + h}.\n\n"
            for h in range(20)
        )
        write(repo, f"memory/daily/2026-01-{day:02d}.md", f"# 2026-01-{day:02d}\n\n{sections}")
    total = 300
    index = repo / ".git" / "nexus" / "index"
    env = {**os.environ, "PYTHONPATH": str(Path(nexusd.__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "syncing"
        deadline = time.monotonic() + 120
        while _rows(index) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    partial = _rows(index)
    assert 0 < partial < total, f"the kill did not land mid-sync ({partial} rows)"

    before = embedder.encoded
    service = make_service()
    stats = service.stats()
    assert (stats.chunks_on_disk, stats.chunks_indexed, stats.drift) == (total, total, 0)
    # Rows committed before the kill kept their vectors: only the rest was embedded.
    assert embedder.encoded - before == total - partial
    hit = service.search("worked on item 1107", k=1, mode="keyword").hits[0]
    assert hit.path == "memory/daily/2026-01-11.md" and "1107" in hit.snippet
