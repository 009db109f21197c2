"""The watcher with a real watchdog observer on tmp dirs: which events become ready paths."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from daemon.helpers import wait_until
from nexusd.daemon.debounce import Debouncer
from nexusd.daemon.watcher import RequestWatcher, closes_are_reported
from nexusd.protocol.request_files import create_request_file, publish_by_link

NAME = "2025-04-20T08_11_37_plan_request.md"
TEXT = "---\ngoal: watch me\n---\n" + "body line\n" * 200


class Ready:
    """Collects (path, content at hand-over time) from the debouncer."""

    def __init__(self) -> None:
        self.items: list[tuple[Path, bytes]] = []
        self.lock = threading.Lock()

    def __call__(self, path: Path) -> None:
        with self.lock:
            self.items.append((path, path.read_bytes()))

    def paths(self) -> list[Path]:
        with self.lock:
            return [p for p, _ in self.items]


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[tuple[Path, Ready, RequestWatcher]]:
    root = tmp_path / "root"
    (root / ".scratchpad_logs").mkdir(parents=True)
    ready = Ready()
    debouncer = Debouncer(ready, debounce=0.05, write_grace=5.0, track_closes=closes_are_reported())
    watcher = RequestWatcher(
        root, [Path(".scratchpad_logs"), Path("later")], debouncer, logging.getLogger("test")
    )
    debouncer.start()
    watcher.start()
    try:
        yield root, ready, watcher
    finally:
        watcher.stop()
        debouncer.stop()


def _in_place(folder: Path, outside: Path) -> Path:
    (folder / NAME).write_text(TEXT, encoding="utf-8")
    return folder / NAME


def _slow_writer(folder: Path, outside: Path) -> Path:
    target = folder / NAME
    with target.open("w", encoding="utf-8") as fh:
        for chunk in (TEXT[:100], TEXT[100:900], TEXT[900:]):
            fh.write(chunk)
            fh.flush()
            time.sleep(0.5)  # ten times the debounce interval
    return target


def _temp_then_rename(folder: Path, outside: Path) -> Path:
    tmp = folder / f"{NAME}~"
    tmp.write_text(TEXT, encoding="utf-8")
    return tmp.replace(folder / NAME)


def _move_in(folder: Path, outside: Path) -> Path:
    (outside / NAME).write_text(TEXT, encoding="utf-8")
    return Path(shutil.move(outside / NAME, folder / NAME))


def _copy(folder: Path, outside: Path) -> Path:
    (outside / NAME).write_text(TEXT, encoding="utf-8")
    return Path(shutil.copy(outside / NAME, folder / NAME))


PATTERNS: dict[str, Callable[[Path, Path], Path]] = {
    "in-place": _in_place,
    "slow-writer": _slow_writer,
    "temp-then-rename": _temp_then_rename,
    "move-in": _move_in,
    "copy": _copy,
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_save_pattern_hands_over_the_complete_file_once(
    watch: tuple[Path, Ready, RequestWatcher], tmp_path: Path, pattern: str
) -> None:
    root, ready, _ = watch
    outside = tmp_path / "outside"
    outside.mkdir()

    target = PATTERNS[pattern](root / ".scratchpad_logs", outside)

    wait_until(ready.paths, what="the request to be handed over")
    time.sleep(0.3)  # room for a (wrong) second hand-over
    assert ready.items == [(target, TEXT.encode())]


def test_partial_file_is_not_handed_over_while_its_writer_holds_it(
    watch: tuple[Path, Ready, RequestWatcher],
) -> None:
    if not closes_are_reported():
        pytest.skip("close events (inotify IN_CLOSE_WRITE) are Linux-only")
    root, ready, _ = watch
    target = root / ".scratchpad_logs" / NAME
    with target.open("w", encoding="utf-8") as fh:
        fh.write(TEXT[:50])
        fh.flush()
        time.sleep(1.0)  # twenty debounce intervals with the file still open
        assert ready.paths() == []
        fh.write(TEXT[50:])
    wait_until(ready.paths, what="hand-over after the close")
    assert ready.items == [(target, TEXT.encode())]


def test_a_rescan_does_not_hand_over_a_file_its_writer_still_holds(
    watch: tuple[Path, Ready, RequestWatcher],
) -> None:
    # The periodic rescan used to count a request being written as "found complete": the
    # half-written request was answered (an error response), then answered again.
    if not closes_are_reported():
        pytest.skip("close events (inotify IN_CLOSE_WRITE) are Linux-only")
    root, ready, watcher = watch
    target = root / ".scratchpad_logs" / NAME
    with target.open("w", encoding="utf-8") as fh:
        fh.write(TEXT[:50])
        fh.flush()
        time.sleep(0.2)  # the watcher has seen the write
        for _ in range(5):
            assert watcher.scan() == 1  # found, as every rescan finds an unhandled request
            time.sleep(0.2)
        assert ready.paths() == []
        fh.write(TEXT[50:])
    wait_until(ready.paths, what="hand-over after the close")
    time.sleep(0.3)  # room for a (wrong) second hand-over
    assert ready.items == [(target, TEXT.encode())]


@pytest.mark.parametrize(
    "name",
    [
        "2025-04-20T08_11_37_plan_response.md",
        f".{NAME}.abc123.tmp",
        f"{NAME}.swp",
        "notes.md",
        "4913",
    ],
)
def test_responses_temp_and_other_files_are_ignored(
    watch: tuple[Path, Ready, RequestWatcher], name: str
) -> None:
    root, ready, _ = watch
    (root / ".scratchpad_logs" / name).write_text(TEXT, encoding="utf-8")
    marker = root / ".scratchpad_logs" / NAME
    marker.write_text(TEXT, encoding="utf-8")  # a real request written after it
    wait_until(ready.paths, what="the marker request")
    time.sleep(0.2)
    assert ready.paths() == [marker]


def test_folder_created_after_start_is_watched_and_scanned(
    watch: tuple[Path, Ready, RequestWatcher], tmp_path: Path
) -> None:
    root, ready, watcher = watch
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / NAME).write_text(TEXT, encoding="utf-8")

    staged.rename(root / "later")  # arrives with a request already inside (like git checkout)
    wait_until(ready.paths, what="the request inside the new folder")
    second = root / "later" / "second_plan_request.md"
    second.write_text(TEXT, encoding="utf-8")

    wait_until(lambda: len(ready.paths()) == 2, what="a request written into the new folder")
    assert ready.paths() == [root / "later" / NAME, second]
    assert str(root / "later") in watcher.watched()


def test_folder_deleted_and_recreated_is_watched_again(
    watch: tuple[Path, Ready, RequestWatcher],
) -> None:
    root, ready, watcher = watch
    folder = root / ".scratchpad_logs"
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / NAME).write_text(TEXT, encoding="utf-8")  # races the re-watch: the scan covers it
    wait_until(ready.paths, what="a request in the recreated folder")
    second = folder / "second_plan_request.md"
    second.write_text(TEXT, encoding="utf-8")

    wait_until(lambda: second in ready.paths(), what="a request written after the re-watch")
    assert str(folder) in watcher.watched()


def test_a_deleted_folder_is_missing_not_watched(
    watch: tuple[Path, Ready, RequestWatcher],
) -> None:
    # `nexusd status` listed it twice: "watching" and "waiting for … (not created yet)".
    root, _, watcher = watch
    folder = root / ".scratchpad_logs"
    assert (watcher.watched(), str(folder) in watcher.missing()) == ([str(folder)], False)
    shutil.rmtree(folder)

    assert (watcher.watched(), str(folder) in watcher.missing()) == ([], True)


def test_scan_hands_over_only_unknown_requests(watch: tuple[Path, Ready, RequestWatcher]) -> None:
    root, ready, watcher = watch
    folder = root / ".scratchpad_logs"
    watcher.stop()  # files written now produce no events: only the scan can find them
    old = folder / "old_plan_request.md"
    new = folder / "new_plan_request.md"
    for path in (old, new):
        path.write_text(TEXT, encoding="utf-8")
    (folder / "old_plan_response.md").write_text("answer", encoding="utf-8")

    count = watcher.scan(known=lambda p: p == old)

    assert count == 1
    wait_until(ready.paths, what="the scanned request")
    assert ready.paths() == [new]


def test_stop_leaves_no_thread_and_is_idempotent(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    debouncer = Debouncer(lambda p: None, debounce=0.05, write_grace=1.0, track_closes=True)
    watcher = RequestWatcher(tmp_path, [Path("x")], debouncer, logging.getLogger("test"))
    debouncer.start()
    watcher.start()
    watcher.stop()
    watcher.stop()
    debouncer.stop()
    wait_until(lambda: set(threading.enumerate()) <= before, what="threads to end")
    assert os.listdir(tmp_path) == []  # watching never creates folders


class _Records(logging.Handler):
    """Collects the messages a logger emits."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_folder_linked_outside_the_root_is_neither_watched_nor_scanned(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / NAME).write_text(TEXT, encoding="utf-8")
    (root / ".scratchpad_logs").symlink_to(outside, target_is_directory=True)
    ready = Ready()
    debouncer = Debouncer(ready, debounce=0.05, write_grace=5.0, track_closes=closes_are_reported())
    records = _Records()
    logger = logging.getLogger("test.outside")
    logger.addHandler(records)
    watcher = RequestWatcher(root, [Path(".scratchpad_logs")], debouncer, logger)
    debouncer.start()
    watcher.start()
    try:
        found = [watcher.scan() for _ in range(3)]
        assert watcher.watched() == []
    finally:
        watcher.stop()
        debouncer.stop()
        logger.removeHandler(records)
    assert found == [0, 0, 0]
    assert ready.paths() == []
    refused = [m for m in records.messages if "outside the repository" in m]
    assert len(refused) == 1, records.messages


def _published_by_link(folder: Path, root: Path) -> Path:
    # Where the file system has no RENAME_NOREPLACE.
    tmp = folder / ".request.abc.tmp"
    tmp.write_text(TEXT, encoding="utf-8")
    target = folder / NAME
    assert publish_by_link(tmp, target)
    tmp.unlink()
    return target


def _created(folder: Path, root: Path) -> Path:
    moment = datetime(2025, 4, 20, 8, 11, 37, tzinfo=UTC)
    return create_request_file(folder, TEXT, moment, root=root)


@pytest.mark.parametrize("publish", [_created, _published_by_link])
def test_a_request_written_by_nexusd_request_new_is_handed_over_without_the_grace(
    tmp_path: Path, publish: Callable[[Path, Path], Path]
) -> None:
    # The project's own client publishes the whole file at once: it must not wait out the
    # grace given to writers that never close (here far longer than the test may wait).
    if not closes_are_reported():
        pytest.skip("the grace only applies where close events are reported (Linux)")
    root = tmp_path / "root"
    folder = root / ".scratchpad_logs"
    folder.mkdir(parents=True)
    ready = Ready()
    debouncer = Debouncer(ready, debounce=0.05, write_grace=3600.0, track_closes=True)
    watcher = RequestWatcher(root, [Path(".scratchpad_logs")], debouncer, logging.getLogger("t"))
    debouncer.start()
    watcher.start()
    try:
        target = publish(folder, root)

        wait_until(ready.paths, what="the request to be handed over")
        assert ready.items == [(target, TEXT.encode())]
    finally:
        watcher.stop()
        debouncer.stop()
