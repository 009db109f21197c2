"""The bounded, de-duplicating work queue."""

from __future__ import annotations

import threading
from pathlib import Path

from nexusd.daemon.work_queue import WorkQueue


def test_fifo_order_and_deduplication() -> None:
    queue = WorkQueue(10)
    for name in ("a", "b", "a", "c", "b"):
        assert queue.put(Path(name))

    assert [queue.get(0) for _ in range(4)] == [Path("a"), Path("b"), Path("c"), None]


def test_a_taken_path_can_be_queued_again() -> None:
    queue = WorkQueue(10)
    queue.put(Path("a"))
    assert queue.get(0) == Path("a")

    assert queue.put(Path("a"))
    assert Path("a") in queue


def test_full_queue_drops_and_reports_the_overflow_once() -> None:
    queue = WorkQueue(2)
    results = [queue.put(Path(str(i))) for i in range(5)]

    assert results == [True, True, False, False, False]
    assert (len(queue), queue.dropped) == (2, 3)
    assert queue.take_overflow() is True
    assert queue.take_overflow() is False


def test_a_request_that_finds_the_queue_full_again_is_counted_once() -> None:
    # `dropped` counts requests (as `nexusd status` says), not the times one was turned
    # away: the rescan after an overflow hands the same paths on again.
    queue = WorkQueue(1)
    assert queue.put(Path("a"))
    for name in ("b", "c", "b", "b", "c"):
        assert not queue.put(Path(name))
    assert queue.dropped == 2
    assert queue.get(0) == Path("a")
    assert queue.put(Path("b"))
    assert not queue.put(Path("c"))
    assert queue.dropped == 2


def test_get_wakes_when_a_path_is_put_from_another_thread() -> None:
    queue = WorkQueue(2)
    got: list[Path | None] = []
    reader = threading.Thread(target=lambda: got.append(queue.get(timeout=30)))
    reader.start()
    queue.put(Path("x"))
    reader.join()

    assert got == [Path("x")]
