"""A real daemon against odd files in its folder: each is handled on its own and never stops
the answer to another request, the status, the log or the shutdown."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from daemon.helpers import (
    daemon_pid,
    front_matter,
    nexusd,
    published,
    request_text,
    response_for,
    wait_answered,
    wait_until,
    write_config,
)
from nexusd.memory.daily import daily_path
from nexusd.paths import find_repo

REQ = "2025-04-20T08_11_37_plan_request.md"


def _log_records(repo: Path) -> list[dict[str, object]]:
    log = repo / ".git" / "nexus" / "logs" / "nexusd.jsonl"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _logged(repo: Path, msg: str) -> list[dict[str, object]]:
    return [r for r in _log_records(repo) if r.get("msg") == msg]


def test_a_timestamp_out_of_range_blocks_no_other_request(daemon: Path) -> None:
    folder = daemon / ".scratchpad_logs"
    odd = folder / "0001-01-01T00:00:00+01:00_plan_request.md"
    odd.write_text("---\ncycle: 1\n---\n", encoding="utf-8")
    assert wait_answered(odd)["status"] == "error"  # no goal: its error response is in the folder
    (folder / "9999-12-31T23:59:59-2359_plan_response.md").write_text("someone's\n")

    request = folder / REQ
    request.write_text(request_text("Explain the README"), encoding="utf-8")

    assert wait_answered(request)["status"] == "ok"


def test_a_name_that_is_not_utf8_is_skipped_and_stops_nothing(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    write_config(served, "watch:\n  rescan_seconds: 1\n")
    start_daemon(served)
    folder = served / ".scratchpad_logs"
    odd = Path(os.fsdecode(os.fsencode(folder) + b"/caf\xe9_plan_request.md"))
    odd.write_text(request_text("Explain the README"), encoding="utf-8")
    request = folder / REQ
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"
    rescans = int(published(served)["rescans"])
    # The status is still published (its thread is alive), after rescans that saw the name.
    wait_until(lambda: int(published(served)["rescans"]) >= rescans + 2, what="two rescans")

    nexusd(served, "stop")

    assert daemon_pid(served) is None  # the pid file went: a clean stop, not a "crash"
    assert published(served)["state"] == "stopped"
    (record,) = _logged(served, "ignored: the file name is not valid UTF-8")
    assert record["path"] == f"{folder}/caf\\xe9_plan_request.md"
    assert not response_for(odd).exists()
    out = (served / ".git" / "nexus" / "logs" / "daemon.out").read_text(errors="replace")
    assert "Logging error" not in out and "Traceback" not in out


def test_an_error_response_to_a_huge_value_is_still_known_as_ours(daemon: Path) -> None:
    request = daemon / ".scratchpad_logs" / REQ
    request.write_text(f"---\ncycle: {'x' * 70_000}\ngoal: Explain\n---\n", encoding="utf-8")
    meta = wait_answered(request)
    assert meta["status"] == "error" and meta["error"]["field"] == "cycle"
    assert response_for(request).stat().st_size < 16_384  # the bad value is not echoed whole

    request.write_text(request_text("Explain the README"), encoding="utf-8")

    fixed = wait_answered(request)
    assert (fixed["status"], fixed["revision"]) == ("ok", 2)


def test_an_edit_that_keeps_size_and_mtime_is_answered_again(daemon: Path) -> None:
    request = daemon / ".scratchpad_logs" / REQ
    request.write_text(request_text("Explain the README file"), encoding="utf-8")
    assert wait_answered(request)["revision"] == 1
    before = request.stat()
    edited = request_text("Explain the NOTICE file")
    assert len(edited) == before.st_size

    # What `cp -p` or `touch -d` leaves: new bytes, same size, mtime and inode.
    with request.open("r+", encoding="utf-8") as fh:
        fh.write(edited)
    os.utime(request, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = request.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )

    meta = wait_answered(request)
    assert meta["revision"] == 2


def test_a_request_name_of_254_bytes_is_answered(daemon: Path) -> None:
    name = "2025-04-20T08_11_37_" + "x" * 218 + "_plan_request.md"
    assert len(name.encode()) == 254  # its response's name: 255, the most a name can be
    request = daemon / ".scratchpad_logs" / name

    request.write_text(request_text("Explain the README"), encoding="utf-8")

    assert wait_answered(request)["status"] == "ok"
    assert len(response_for(request).name.encode()) == 255


def test_a_request_name_too_long_for_its_response_says_to_rename_it_and_stops_nothing(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    # Its response's name would be 256 bytes: answering it raised (a traceback in the log,
    # counted as a failure), when the one thing to do is to rename the request.
    write_config(served, "watch:\n  rescan_seconds: 1\n")
    start_daemon(served)
    folder = served / ".scratchpad_logs"
    odd = folder / ("2025-04-20T08_11_37_" + "x" * 219 + "_plan_request.md")
    assert len(odd.name.encode()) == 255
    odd.write_text(request_text("Explain the README"), encoding="utf-8")
    request = folder / REQ
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"

    status = wait_until(lambda: (s := published(served))["last_error"] and s, what="the error")
    assert status["last_error"]["path"] == str(odd)
    assert "too long a name" in status["last_error"]["message"]
    assert "rename the request to a name of at most 254 bytes" in status["last_error"]["message"]
    assert (status["failures"], status["errors"]) == (0, 1)
    assert not _logged(served, "request failed")

    shorter = odd.rename(folder / ("2025-04-20T08_11_37_" + "x" * 218 + "_plan_request.md"))
    assert wait_answered(shorter)["status"] == "ok"


def test_stale_temporary_files_of_every_response_name_are_removed(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    folder = served / ".scratchpad_logs"
    stale = [  # a killed daemon's
        folder / ".a_plan_response.md.0123456789ab.tmp",
        folder / ".a-plan_response.md.0123456789ab.tmp",
    ]
    hour_ago = time.time() - 3600
    for tmp in stale:
        tmp.touch()
        os.utime(tmp, (hour_ago, hour_ago))
    fresh = folder / ".b-plan_response.md.0123456789ab.tmp"  # perhaps being written now
    fresh.touch()

    start_daemon(served)

    assert [p for p in stale if p.exists()] == []
    assert fresh.exists()


def test_a_refusal_that_writes_nothing_leaves_no_daily_entry(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    start_daemon(served)
    request = served / ".scratchpad_logs" / REQ
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert wait_answered(request)["status"] == "ok"
    note = daily_path(find_repo(served), datetime.now())
    response = response_for(request)
    # The daily note is written after the response: it may not be there yet.
    wait_until(
        lambda: note.is_file() and response.name in note.read_text(encoding="utf-8"),
        what="the entry",
    )

    # Replaced by a link: refused, and the answer to the regular file is kept.
    request.unlink()
    request.symlink_to(served / "README.md")
    wait_until(lambda: published(served).get("errors", 0) >= 1, what="the refusal")
    nexusd(served, "stop")
    start_daemon(served)  # its start-up scan refuses it once more
    wait_until(lambda: published(served).get("errors", 0) >= 1, what="the second refusal")
    nexusd(served, "stop")

    assert front_matter(response)["status"] == "ok"
    assert note.read_text(encoding="utf-8").count(response.name) == 1
    # The log does not call the kept response an answer either.
    assert len(_logged(served, "not answered (no response written)")) >= 2
    assert not _logged(served, "answered with an error")
