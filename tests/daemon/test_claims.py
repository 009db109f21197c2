"""The per-request claim: exclusive across processes, and its lock file gone once released."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from daemon.helpers import nexusd, nexusd_env, request_text, response_for, wait_until
from nexusd.paths import find_repo

CONTENDER = """
import os, sys, time
from pathlib import Path
from nexusd.daemon.answering import request_claim
from nexusd.paths import find_repo

repo, request, marker, log, rounds = sys.argv[1:6]
layout = find_repo(Path(repo))
for _ in range(int(rounds)):
    with request_claim(layout, Path(request)):
        # Whoever else holds the claim now has created the marker: O_EXCL fails.
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        time.sleep(0.0005)
        os.close(fd)
        os.unlink(marker)
        with open(log, "a") as fh:
            fh.write("x")
"""


def _claims(repo: Path) -> list[str]:
    folder = find_repo(repo).nexus_dir / "claims"
    return sorted(p.name for p in folder.glob("*")) if folder.is_dir() else []


def test_an_answered_request_leaves_no_claim_file(served: Path) -> None:
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    nexusd(served, "plan", "--no-memory", str(request))
    assert response_for(request).is_file()
    assert _claims(served) == []


def test_contending_processes_hold_a_claim_one_at_a_time_and_leave_nothing(
    served: Path, tmp_path: Path
) -> None:
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_12_plan_request.md"
    request.write_text(request_text("Contended"), encoding="utf-8")
    marker, log = tmp_path / "held", tmp_path / "entries"
    rounds, procs = 150, 4
    args = [str(served), str(request), str(marker), str(log), str(rounds)]
    running = [
        subprocess.Popen(
            [sys.executable, "-c", CONTENDER, *args],
            env=nexusd_env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(procs)
    ]
    errors = [p.communicate(timeout=120)[1] for p in running]
    assert [p.returncode for p in running] == [0] * procs, "\n".join(errors)
    assert log.read_text() == "x" * rounds * procs
    assert _claims(served) == []


HOLDER = """
import sys
from pathlib import Path
from nexusd.daemon.answering import request_claim
from nexusd.paths import find_repo

with request_claim(find_repo(Path(sys.argv[1])), Path(sys.argv[2])):
    print("held", flush=True)
    sys.stdin.readline()
"""


def _holding(served: Path, request: Path) -> subprocess.Popen[str]:
    """A process that takes `request`'s claim, says "held", and keeps it until a line comes."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(served), str(request)],
        env=nexusd_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_the_sweep_removes_only_claims_nobody_holds(served: Path) -> None:
    from nexusd.daemon.claims import claim_file, sweep_claims

    layout = find_repo(served)
    held = served / ".scratchpad_logs" / "a_plan_request.md"
    left = served / ".scratchpad_logs" / "b_plan_request.md"
    # A claim whose holder was killed keeps its file; one held right now must stay.
    killed = _holding(served, left)
    holder = _holding(served, held)
    try:
        assert killed.stdout is not None and holder.stdout is not None
        assert killed.stdout.readline() == holder.stdout.readline() == "held\n"
        killed.kill()
        killed.wait()
        assert claim_file(layout, left).exists()

        assert sweep_claims(layout) == 1
        assert not claim_file(layout, left).exists()
        assert claim_file(layout, held).exists()
    finally:
        holder.communicate("\n", timeout=30)
    wait_until(lambda: _claims(served) == [], what="the holder's claim file removed")
