"""The status record and its atomically published file."""

from __future__ import annotations

import threading
from pathlib import Path

from daemon.helpers import wait_until
from nexusd.daemon.status import DaemonStats, StatusWriter, read_status, write_status


def test_counters_and_last_error_are_published(tmp_path: Path) -> None:
    stats = DaemonStats(pid=1234)
    stats.add("answered")
    stats.add("answered")
    stats.record_error(tmp_path / "x_plan_request.md", "cannot write")
    write_status(tmp_path, stats)

    data = read_status(tmp_path)

    assert data is not None
    assert (data["pid"], data["answered"], data["state"]) == (1234, 2, "starting")
    assert data["last_error"]["message"] == "cannot write"
    assert data["last_error"]["path"].endswith("x_plan_request.md")
    assert set(data) >= {"version", "started_at", "queued", "watched", "errors", "skipped"}


def test_concurrent_increments_are_not_lost() -> None:
    stats = DaemonStats(pid=1)

    def bump() -> None:
        for _ in range(1000):
            stats.add("skipped")

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert stats.snapshot()["skipped"] == 4000


def test_writer_republishes_changes_and_writes_a_final_snapshot(tmp_path: Path) -> None:
    stats = DaemonStats(pid=1)
    writer = StatusWriter(tmp_path, stats, min_interval=0.01)
    writer.start()
    try:
        stats.set(state="running")
        wait_until(lambda: (read_status(tmp_path) or {}).get("state") == "running", what="publish")
    finally:
        stats.set(state="stopped")
        writer.stop()
    assert (read_status(tmp_path) or {}).get("state") == "stopped"
    assert not list(tmp_path.glob(".*.tmp"))


def test_unreadable_status_is_none(tmp_path: Path) -> None:
    assert read_status(tmp_path) is None
    (tmp_path / "status.json").write_text("{half", encoding="utf-8")
    assert read_status(tmp_path) is None


def test_hand_edited_folder_lists_are_left_out_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "status.json").write_text(
        '{"state": "stopped", "answered": 3, "watched": 5, "pending_watch": ["a", 1]}',
        encoding="utf-8",
    )
    data = read_status(tmp_path)
    assert data == {"state": "stopped", "answered": 3}
