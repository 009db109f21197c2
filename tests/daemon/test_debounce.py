"""The debouncer on real files: quiet, stable and closed before a path is handed on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.helpers import wait_until
from nexusd.daemon.debounce import Debouncer, Touch


class Collector:
    def __init__(self) -> None:
        self.items: list[tuple[Path, bytes]] = []
        self.lock = threading.Lock()

    def __call__(self, path: Path) -> None:
        with self.lock:
            self.items.append((path, path.read_bytes()))

    def snapshot(self) -> list[tuple[Path, bytes]]:
        with self.lock:
            return list(self.items)


@pytest.fixture
def collected() -> Iterator[tuple[Collector, Debouncer]]:
    collector = Collector()
    debouncer = Debouncer(collector, debounce=0.05, write_grace=0.5, track_closes=True)
    debouncer.start()
    try:
        yield collector, debouncer
    finally:
        debouncer.stop()


def test_a_file_growing_without_events_waits_until_it_is_stable(
    collected: tuple[Collector, Debouncer], tmp_path: Path
) -> None:
    collector, debouncer = collected
    target = tmp_path / "x_plan_request.md"
    target.write_bytes(b"")
    debouncer.touch(target, Touch.APPEAR)
    with target.open("ab") as fh:
        for _ in range(30):  # grows for ~0.6 s, each step shorter than the debounce interval
            fh.write(b"line\n")
            fh.flush()
            time.sleep(0.02)

    wait_until(collector.snapshot, what="the hand-over")
    assert collector.snapshot() == [(target, b"line\n" * 30)]


def test_an_unclosed_write_is_held_until_the_close(tmp_path: Path) -> None:
    collector = Collector()
    debouncer = Debouncer(collector, debounce=0.05, write_grace=600, track_closes=True)
    debouncer.start()
    try:
        target = tmp_path / "x_plan_request.md"
        target.write_bytes(b"complete")
        debouncer.touch(target, Touch.WRITE)
        time.sleep(0.5)  # ten debounce intervals: quiet and stable, but not closed
        assert collector.snapshot() == []
        debouncer.touch(target, Touch.CLOSE)

        wait_until(collector.snapshot, what="the hand-over after the close")
        assert debouncer.pending() == 0
    finally:
        debouncer.stop()


@pytest.mark.parametrize("kind", [Touch.CLOSE, Touch.APPEAR])
def test_a_closed_or_renamed_file_waits_only_the_settle_time(tmp_path: Path, kind: Touch) -> None:
    collector = Collector()
    # The debounce interval is far beyond the test's patience: only `settle` can hand it on.
    debouncer = Debouncer(collector, debounce=600, write_grace=600, track_closes=True, settle=0.01)
    debouncer.start()
    try:
        target = tmp_path / "x_plan_request.md"
        target.write_bytes(b"complete")
        debouncer.touch(target, Touch.WRITE)
        debouncer.touch(target, kind)

        wait_until(collector.snapshot, what="the hand-over after the settle time")
        assert collector.snapshot() == [(target, b"complete")]
    finally:
        debouncer.stop()


def test_a_write_after_the_close_waits_the_full_debounce_again(tmp_path: Path) -> None:
    collector = Collector()
    debouncer = Debouncer(collector, debounce=600, write_grace=600, track_closes=True, settle=0.01)
    debouncer.start()
    try:
        target = tmp_path / "x_plan_request.md"
        target.write_bytes(b"first")
        debouncer.touch(target, Touch.CLOSE)
        target.write_bytes(b"first, then more")  # the writer reopened it at once
        debouncer.touch(target, Touch.WRITE)
        time.sleep(0.3)  # thirty settle intervals

        assert collector.snapshot() == []
        assert debouncer.pending() == 1
        # The positive control: the second close hands the whole file on, so the quiet
        # above was the debouncer waiting, not a debouncer that hands nothing on at all.
        debouncer.touch(target, Touch.CLOSE)
        wait_until(collector.snapshot, what="the hand-over after the second close")
        assert collector.snapshot() == [(target, b"first, then more")]
    finally:
        debouncer.stop()


def test_a_write_never_closed_is_handed_on_after_the_grace(
    collected: tuple[Collector, Debouncer], tmp_path: Path
) -> None:
    collector, debouncer = collected
    target = tmp_path / "x_plan_request.md"
    target.write_bytes(b"written through mmap, say")
    debouncer.touch(target, Touch.WRITE)

    wait_until(collector.snapshot, what="the hand-over after the write grace")


def test_a_deleted_file_is_dropped(collected: tuple[Collector, Debouncer], tmp_path: Path) -> None:
    collector, debouncer = collected
    target = tmp_path / "x_plan_request.md"
    target.write_bytes(b"short-lived")
    debouncer.touch(target, Touch.APPEAR)
    target.unlink()

    wait_until(lambda: debouncer.pending() == 0, what="the pending entry to go")
    assert collector.snapshot() == []


def test_a_file_found_by_a_scan_is_handed_on_after_the_settle_time(tmp_path: Path) -> None:
    collector = Collector()
    debouncer = Debouncer(collector, debounce=600, write_grace=600, track_closes=True, settle=0.01)
    debouncer.start()
    try:
        target = tmp_path / "x_plan_request.md"
        target.write_bytes(b"written while the daemon was down")
        debouncer.touch(target, Touch.FOUND)

        wait_until(collector.snapshot, what="the hand-over of a file a scan found")
        assert collector.snapshot() == [(target, b"written while the daemon was down")]
    finally:
        debouncer.stop()


def test_a_scan_does_not_cut_short_the_wait_for_an_open_writer(tmp_path: Path) -> None:
    collector = Collector()
    debouncer = Debouncer(collector, debounce=0.05, write_grace=600, track_closes=True, settle=0.01)
    debouncer.start()
    try:
        target = tmp_path / "x_plan_request.md"
        target.write_bytes(b"---\ngoal: half")
        debouncer.touch(target, Touch.WRITE)
        for _ in range(5):  # rescans find it, each more than a debounce interval apart
            time.sleep(0.1)
            debouncer.touch(target, Touch.FOUND)
        time.sleep(0.2)

        assert collector.snapshot() == []
        target.write_bytes(b"---\ngoal: half, then whole\n---\n")
        debouncer.touch(target, Touch.CLOSE)
        wait_until(collector.snapshot, what="the hand-over after the close")
        assert collector.snapshot() == [(target, b"---\ngoal: half, then whole\n---\n")]
    finally:
        debouncer.stop()
