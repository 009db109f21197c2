"""The daemon's log: JSON lines under `<nexus>/logs/`, rotated; read back pretty or raw.

Each line is one object: `ts` (UTC, ISO 8601), `level`, `logger`, `msg`, plus
the structured fields passed with `log_event(..., path=…, status=…)`.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import time
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOGGER_NAME = "nexusd"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3
_FIELDS_ATTR = "nexus_fields"


def printable(text: str) -> str:
    """`text` as valid UTF-8: bytes of a file name that is not UTF-8 shown as `\\xe9`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:
        # Python decodes such names with surrogateescape: give the bytes back, then show them.
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def printable_data(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, text) with every string made `printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable_data(v) for v in value]
    return value


class JsonLineFormatter(logging.Formatter):
    """One JSON object per record; exceptions become an `error` field with the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        """Render `record` as a single JSON line."""
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, _FIELDS_ATTR, None)
        if isinstance(fields, dict):
            data.update(fields)
        if record.exc_info:
            data["traceback"] = self.formatException(record.exc_info)
        line = json.dumps(data, default=str, ensure_ascii=False)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            # A file name that is not UTF-8 must not cost the line (the handler's encoder
            # would fail on it): its bytes are shown escaped instead.
            data = printable_data(json.loads(json.dumps(data, default=str)))
            line = json.dumps(data, ensure_ascii=False)
        return line


class PrettyFormatter(logging.Formatter):
    """Human-readable lines for a terminal (`--foreground`)."""

    def format(self, record: logging.LogRecord) -> str:
        """Render `record` the way `nexusd logs` prints it."""
        return pretty_line(json.loads(JsonLineFormatter().format(record)))


def setup_logging(
    log_file: Path, level: str = "info", *, to_stderr: bool = False
) -> logging.Logger:
    """Send the `nexusd` logger to a rotating JSON-lines file (and stderr if asked)."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(level.upper())
    logger.propagate = False
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    file_handler = logging.handlers.RotatingFileHandler(
        log_file, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
    )
    file_handler.setFormatter(JsonLineFormatter())
    logger.addHandler(file_handler)
    if to_stderr:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(PrettyFormatter())
        logger.addHandler(stream)
    return logger


def close_logging() -> None:
    """Flush and detach the handlers `setup_logging` added."""
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def log_event(
    logger: logging.Logger, level: int, msg: str, *, exc_info: bool = False, **fields: Any
) -> None:
    """Log `msg` with structured fields that land as keys of the JSON line."""
    logger.log(level, msg, extra={_FIELDS_ATTR: fields}, exc_info=exc_info)


def pretty_line(data: dict[str, Any]) -> str:
    """`2026-01-01 12:00:00.123 INFO  answered  path=… status=ok` from a parsed JSON line."""
    ts = str(data.get("ts", ""))[:23].replace("T", " ")
    level = str(data.get("level", "?")).upper()
    skip = {"ts", "level", "logger", "msg", "traceback"}
    extra = " ".join(f"{k}={v}" for k, v in data.items() if k not in skip)
    line = f"{ts} {level:<7} {data.get('msg', '')}"
    if extra:
        line += f"  {extra}"
    if data.get("traceback"):
        line += "\n" + str(data["traceback"])
    return line


def render_line(raw: str, *, as_json: bool) -> str:
    """A log line as stored (`as_json`) or pretty; lines that are not JSON pass through."""
    raw = raw.rstrip("\n")
    if as_json:
        return raw
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return pretty_line(data) if isinstance(data, dict) else raw


def tail_lines(log_file: Path, count: int) -> list[str]:
    """The last `count` lines of the log, reaching into the previous rotated file if needed."""
    lines: deque[str] = deque(maxlen=max(count, 0))
    for path in (log_file.with_name(log_file.name + ".1"), log_file):
        if path.is_file():
            with path.open(encoding="utf-8", errors="replace") as fh:
                lines.extend(line.rstrip("\n") for line in fh)
    return list(lines)


def log_size(log_file: Path) -> int:
    """The log's current size (where `follow_lines` should start to miss nothing)."""
    return log_file.stat().st_size if log_file.is_file() else 0


def follow_lines(
    log_file: Path, *, start: int | None = None, poll: float = 0.2, stop: Any = None
) -> Iterator[str]:
    """Yield lines appended after byte `start` (default: now), across rotation, until `stop()`."""
    handle = None
    inode = None
    position = log_size(log_file) if start is None else start
    try:
        while stop is None or not stop():
            try:
                st = log_file.stat()
            except FileNotFoundError:
                time.sleep(poll)
                continue
            if handle is None or st.st_ino != inode or st.st_size < position:
                if handle is not None:
                    handle.close()
                    position = 0  # rotated: the new file is read from its start
                handle = log_file.open(encoding="utf-8", errors="replace")
                inode = st.st_ino
                handle.seek(position)
            line = handle.readline()
            if line.endswith("\n"):
                position = handle.tell()
                yield line.rstrip("\n")
                continue
            handle.seek(position)
            time.sleep(poll)
    finally:
        if handle is not None:
            handle.close()
