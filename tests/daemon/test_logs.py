"""JSON-lines logging, rotation, tail and follow."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.helpers import wait_until
from nexusd.daemon import logs
from nexusd.daemon.logs import follow_lines, log_event, render_line, setup_logging, tail_lines


@pytest.fixture
def logger(tmp_path: Path) -> Iterator[logging.Logger]:
    yield setup_logging(tmp_path / "logs" / "nexusd.jsonl", "debug")
    logs.close_logging()


def test_each_record_is_one_json_object_with_fields(logger: logging.Logger, tmp_path: Path) -> None:
    log_event(logger, logging.INFO, "answered", path="/x_plan_request.md", ms=12.5)
    try:
        raise ValueError("bad thing")
    except ValueError:
        log_event(logger, logging.ERROR, "request failed", exc_info=True, path="/y")

    lines = (tmp_path / "logs" / "nexusd.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["msg"] == "answered"
    assert (first["level"], first["path"], first["ms"]) == ("info", "/x_plan_request.md", 12.5)
    assert first["ts"].endswith("+00:00")
    assert second["level"] == "error"
    assert "ValueError: bad thing" in second["traceback"]


def test_render_pretty_and_raw() -> None:
    raw = json.dumps({"ts": "2026-01-02T03:04:05.678+00:00", "level": "info", "msg": "hi", "n": 1})

    assert render_line(raw, as_json=True) == raw
    assert render_line(raw, as_json=False) == "2026-01-02 03:04:05.678 INFO    hi  n=1"
    assert render_line("not json", as_json=False) == "not json"


def test_rotation_keeps_the_tail_readable(
    logger: logging.Logger, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_file = tmp_path / "logs" / "nexusd.jsonl"
    handler = logger.handlers[0]
    assert isinstance(handler, logging.handlers.RotatingFileHandler)
    monkeypatch.setattr(handler, "maxBytes", 2000)
    for i in range(100):
        log_event(logger, logging.INFO, f"line {i}")

    assert (tmp_path / "logs" / "nexusd.jsonl.1").exists()
    tail = [json.loads(line)["msg"] for line in tail_lines(log_file, 30)]
    assert tail == [f"line {i}" for i in range(70, 100)]


def test_follow_yields_new_lines_across_rotation(tmp_path: Path) -> None:
    log_file = tmp_path / "nexusd.jsonl"
    log_file.write_text("old\n", encoding="utf-8")
    seen: list[str] = []
    stop = threading.Event()
    reader = threading.Thread(
        target=lambda: seen.extend(follow_lines(log_file, start=4, poll=0.02, stop=stop.is_set))
    )
    reader.start()
    try:
        with log_file.open("a", encoding="utf-8") as fh:
            fh.write("one\n")
        wait_until(lambda: seen == ["one"], what="the appended line")
        log_file.rename(tmp_path / "nexusd.jsonl.1")
        log_file.write_text("two\n", encoding="utf-8")
        wait_until(lambda: seen == ["one", "two"], what="the line after rotation")
    finally:
        stop.set()
        reader.join()
