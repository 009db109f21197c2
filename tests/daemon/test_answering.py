"""Answering under the per-request claim; request files that are links are refused unread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from conftest import git

from daemon.helpers import (
    front_matter,
    nexusd,
    nexusd_env,
    published,
    request_text,
    response_for,
    wait_answered,
    wait_until,
    write_config,
)
from nexusd.config import load_config
from nexusd.daemon.answering import answer_claimed, refusal
from nexusd.daemon.claims import request_claim
from nexusd.errors import ProtocolError
from nexusd.models.telemetry import telemetry_file
from nexusd.paths import find_repo
from nexusd.planner.pipeline import Outcome, answer_request

SECRET = "root:x:0:0:hunter2-never-echoed"


def _secret_file(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    secret = outside / "passwd"
    secret.write_text(f"{SECRET}\n", encoding="utf-8")
    return secret


def _files_mentioning(repo: Path, text: str) -> list[str]:
    out = []
    for path in repo.rglob("*"):
        if ".git" in path.relative_to(repo).parts or path.is_symlink() or not path.is_file():
            continue
        try:
            said = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue  # a temporary file the daemon renamed into place meanwhile
        if text in said:
            out.append(path.relative_to(repo).as_posix())
    return out


def test_daemon_refuses_a_request_that_links_outside_the_repository(
    daemon: Path, tmp_path: Path
) -> None:
    link = daemon / ".scratchpad_logs" / "x_plan_request.md"
    link.symlink_to(_secret_file(tmp_path))
    response = response_for(link)
    meta = wait_until(lambda: front_matter(response), what="the refusal")
    assert meta["status"] == "error"
    assert "symbolic link" in meta["error"]["message"]
    assert _files_mentioning(daemon, "hunter2") == []  # not in the response nor the daily note


def test_plan_command_refuses_a_linked_request(served: Path, tmp_path: Path) -> None:
    link = served / ".scratchpad_logs" / "x_plan_request.md"
    link.symlink_to(_secret_file(tmp_path))
    proc = nexusd(served, "plan", "--no-memory", str(link), check=False)
    assert proc.returncode == 4, proc.stderr
    assert "symbolic link" in response_for(link).read_text(encoding="utf-8")
    assert _files_mentioning(served, "hunter2") == []
    # --stdout too reads nothing of it.
    proc = nexusd(served, "plan", "--stdout", "--no-memory", str(link), check=False)
    assert proc.returncode == 4 and "hunter2" not in proc.stdout


def test_refusal_is_written_once_and_a_real_file_is_answered(served: Path, tmp_path: Path) -> None:
    layout = find_repo(served)
    config = load_config(served)
    link = served / ".scratchpad_logs" / "x_plan_request.md"
    link.symlink_to(_secret_file(tmp_path))
    first = answer_claimed(link, layout, config)
    again = answer_claimed(link, layout, config)
    assert (first.status, first.revision) == ("error", 1)
    assert (again.status, again.revision) == ("skipped", 1)
    link.unlink()
    link.write_text(request_text("Explain the README"), encoding="utf-8")
    real = answer_claimed(link, layout, config)
    assert (real.status, real.revision) == ("ok", 2)


def test_a_request_folder_linked_outside_is_refused(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".scratchpad_logs").symlink_to(elsewhere, target_is_directory=True)
    request = repo / ".scratchpad_logs" / "y_plan_request.md"
    request.write_text(request_text("Read me"), encoding="utf-8")
    error = refusal(find_repo(repo), request)
    assert error is not None and "outside the repository" in error.message


def test_a_link_swapped_in_after_the_check_is_not_read(served: Path, tmp_path: Path) -> None:
    # The pipeline's own read refuses links, whoever calls it.
    link = served / ".scratchpad_logs" / "z_plan_request.md"
    link.symlink_to(_secret_file(tmp_path))
    outcome = answer_request(link, find_repo(served), load_config(served))
    assert outcome.status == "error"
    assert not response_for(link).exists()


def test_a_response_path_that_is_a_link_is_kept_unread(served: Path, tmp_path: Path) -> None:
    request = served / ".scratchpad_logs" / "w_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    response_for(request).symlink_to(_secret_file(tmp_path))
    outcome = answer_claimed(request, find_repo(served), load_config(served))
    assert outcome.status == "skipped"
    assert response_for(request).is_symlink()


def test_plan_waits_for_the_claim_and_does_not_answer_twice(served: Path) -> None:
    layout = find_repo(served)
    config = load_config(served)
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    # The test plays the busy daemon: it holds the claim while a foreground run starts.
    with request_claim(layout, request):
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "nexusd", "plan", "--json", "--no-memory", str(request)],
            cwd=served,
            env=nexusd_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert "waiting" in line, line
            assert not response_for(request).exists()
            ours = answer_request(request, layout, config)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    out, err = proc.communicate(timeout=90)
    assert ours.status == "ok"
    assert proc.returncode == 0, err
    assert '"status": "skipped"' in out
    assert front_matter(response_for(request))["revision"] == 1
    checkpoints = git(served, "for-each-ref", "refs/nexus/checkpoints/").splitlines()
    assert len(checkpoints) == 1


def _log_records(repo: Path) -> list[dict[str, object]]:
    log = repo / ".git" / "nexus" / "logs" / "nexusd.jsonl"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _ignored(repo: Path) -> dict[str, str]:
    return {
        Path(str(r["path"])).name: str(r["kind"])
        for r in _log_records(repo)
        if r.get("msg") == "ignored: named like a request but not a regular file"
    }


def _rescans(repo: Path) -> int:
    status = repo / ".git" / "nexus" / "state" / "status.json"
    try:
        return int(json.loads(status.read_text(encoding="utf-8")).get("rescans", 0))
    except (OSError, ValueError):
        return 0


def test_fifo_and_folder_named_like_requests_are_logged_once(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    folder = served / ".scratchpad_logs"
    os.mkfifo(folder / "early_plan_request.md")  # found by the start-up scan
    write_config(served, "watch:\n  rescan_seconds: 1\n")
    start_daemon(served)
    os.mkfifo(folder / "fifo_plan_request.md")  # seen by the watcher
    (folder / "dir_plan_request.md").mkdir()
    wanted = {"early_plan_request.md": "FIFO", "fifo_plan_request.md": "FIFO"}
    wanted["dir_plan_request.md"] = "folder"
    wait_until(lambda: _ignored(served) == wanted, what="a log line for each")
    # A later request is answered (the FIFO never blocked the worker), and rescans do not
    # log the same entries again.
    request = folder / "real_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    wait_until(lambda: front_matter(response_for(request)), what="the real request's answer")
    wait_until(lambda: _rescans(served) >= 3, what="three rescans")
    nexusd(served, "stop")
    records = [r for r in _log_records(served) if str(r.get("msg", "")).startswith("ignored")]
    assert len(records) == 3


def test_a_dangling_link_named_like_a_request_gets_an_error_response(daemon: Path) -> None:
    link = daemon / ".scratchpad_logs" / "gone_plan_request.md"
    link.symlink_to(daemon / "nowhere.md")
    meta = wait_until(lambda: front_matter(response_for(link)), what="the refusal")
    assert meta["status"] == "error"


def test_plan_in_a_folder_linked_outside_writes_nothing_there(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".scratchpad_logs").symlink_to(elsewhere, target_is_directory=True)
    request = repo / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(request_text("Read me"), encoding="utf-8")
    args = ("plan", "--repo", str(repo), "--no-memory")
    proc = nexusd(repo, *args, str(request), check=False)
    assert proc.returncode == 4, proc.stderr
    assert "outside the repository" in proc.stderr
    proc = nexusd(repo, *args, "--stdout", str(request), check=False)
    assert proc.returncode == 4 and "outside the repository" in proc.stderr
    outcome = answer_claimed(request, find_repo(repo), load_config(repo))
    assert outcome.status == "error" and "outside the repository" in outcome.message
    assert sorted(p.name for p in elsewhere.iterdir()) == [request.name]


def test_a_refusal_never_overwrites_an_answer(served: Path, tmp_path: Path) -> None:
    layout = find_repo(served)
    config = load_config(served)
    request = served / ".scratchpad_logs" / "v_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert answer_claimed(request, layout, config).status == "ok"
    answered = response_for(request).read_bytes()
    request.unlink()
    request.symlink_to(_secret_file(tmp_path))
    for force in (False, True):
        outcome = answer_claimed(request, layout, config, force=force)
        assert outcome.status == "error" and "symbolic link" in outcome.message
        assert response_for(request).read_bytes() == answered


def test_a_worktree_whose_folder_links_to_the_main_one_leaves_its_answers_alone(
    served: Path, tmp_path: Path
) -> None:
    request = served / ".scratchpad_logs" / "2025-04-20T08_11_37_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert answer_claimed(request, find_repo(served), load_config(served)).status == "ok"
    answered = response_for(request).read_bytes()
    wt = tmp_path / "wt"
    git(served, "worktree", "add", "-q", "-b", "side", str(wt))
    folder = wt / ".scratchpad_logs"
    if folder.exists():
        for entry in folder.iterdir():
            entry.unlink()
        folder.rmdir()
    folder.symlink_to(served / ".scratchpad_logs", target_is_directory=True)
    # The worktree's foreground answers, again and again, never touch the main response.
    for _ in range(2):
        outcome = answer_claimed(folder / request.name, find_repo(wt), load_config(wt))
        assert outcome.status == "error" and "outside the repository" in outcome.message
        assert response_for(request).read_bytes() == answered
    args = ("plan", "--repo", str(wt), "--force", "--no-memory", str(folder / request.name))
    proc = nexusd(wt, *args, check=False)
    assert proc.returncode == ProtocolError.exit_code, proc.stderr
    assert "outside the repository" in proc.stderr
    assert response_for(request).read_bytes() == answered


GATE = """\
import pathlib, sys, time
here = pathlib.Path(sys.argv[1])
(here / "started").touch()
while not (here / "go").exists():
    time.sleep(0.05)
"""


def _gated(repo: Path, tmp_path: Path) -> Path:
    """A check that holds every answer after the request was read, until `<gate>/go` exists."""
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "gate.py").write_text(GATE, encoding="utf-8")
    write_config(
        repo,
        "sandbox:\n  backend: subprocess\nchecks:\n  - name: gate\n"
        f"    run: python3 {gate / 'gate.py'} {gate}\n    timeout: 120\n",
    )
    return gate


def _under_way(
    served: Path, tmp_path: Path, start_daemon: Callable[..., Path]
) -> tuple[Path, Path]:
    """A daemon answering a new request, held at the gate: the gate and the request."""
    gate = _gated(served, tmp_path)
    start_daemon(served)
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(request_text("Rewrite the billing module"), encoding="utf-8")
    wait_until((gate / "started").exists, timeout=60, what="the answer to be under way")
    return gate, request


def test_a_request_deleted_while_the_daemon_answers_it_gets_no_response(
    served: Path, tmp_path: Path, start_daemon: Callable[..., Path]
) -> None:
    gate, request = _under_way(served, tmp_path, start_daemon)
    request.unlink()  # after the daemon read it, before it wrote its response
    (gate / "go").touch()
    done = wait_until(
        lambda: published(served).get("skipped") or published(served).get("answered"),
        timeout=60,
        what="the attempt to end",
    )
    assert done and not published(served).get("answered")
    assert not response_for(request).exists()
    assert not published(served).get("errors") and not published(served).get("last_error")
    assert _files_mentioning(served, "Rewrite the billing module") == []  # no daily note line
    # The daemon goes on: the next request is answered.
    later = served / ".scratchpad_logs" / "2025-05-08T14_03_00_plan_request.md"
    later.write_text(request_text("Explain the README"), encoding="utf-8")
    assert wait_answered(later, timeout=60)["status"] == "ok"


def _deleted_during_a_second_answer(
    served: Path, tmp_path: Path, delete: Callable[[Path], None]
) -> tuple[Path, bytes, list[Outcome]]:
    """Answer a request, change it, and `delete(request)` while its second answer is held at
    the gate: the request, its first response's bytes and the second answer's outcomes."""
    gate = _gated(served, tmp_path)
    (gate / "go").touch()
    layout, config = find_repo(served), load_config(served)
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert answer_claimed(request, layout, config).status == "ok"
    earlier = response_for(request).read_bytes()
    (gate / "go").unlink()
    (gate / "started").unlink()
    request.write_text(request_text("Rewrite the billing module", cycle=2), encoding="utf-8")
    outcomes: list[Outcome] = []
    worker = threading.Thread(
        target=lambda: outcomes.append(answer_claimed(request, layout, config))
    )
    worker.start()
    try:
        wait_until((gate / "started").exists, timeout=60, what="the second answer")
        delete(request)
    finally:
        (gate / "go").touch()
        worker.join(120)
    return request, earlier, outcomes


def test_a_request_deleted_while_answered_keeps_its_earlier_response(
    served: Path, tmp_path: Path
) -> None:
    request, earlier, outcomes = _deleted_during_a_second_answer(
        served, tmp_path, lambda request: request.unlink()
    )
    assert outcomes and outcomes[0].status == "skipped", outcomes
    assert "deleted" in outcomes[0].message
    assert response_for(request).read_bytes() == earlier  # not the billing plan
    # Deleted before it was read (still queued, or waiting for the claim): skipped, not an
    # error to retry.
    outcome = answer_claimed(request, find_repo(served), load_config(served))
    assert (outcome.status, response_for(request).read_bytes()) == ("skipped", earlier)


def test_a_response_deleted_with_its_request_while_answered_is_not_put_back(
    served: Path, tmp_path: Path
) -> None:
    # `rm x_plan_request.md x_plan_response.md` (or a branch switch, `rm -r` of the folder)
    # while x is answered again: the earlier response was deleted on purpose.
    def both(request: Path) -> None:
        request.unlink()
        response_for(request).unlink()

    request, _earlier, outcomes = _deleted_during_a_second_answer(served, tmp_path, both)
    assert outcomes and outcomes[0].status == "skipped", outcomes
    assert not response_for(request).exists()
    # Nor is the attempt an answered request in the telemetry (`nexusd stats`).
    lines = telemetry_file(find_repo(served)).read_text(encoding="utf-8").splitlines()
    events = [e for e in map(json.loads, lines) if e.get("event") == "request"]
    assert [e["status"] for e in events] == ["ok"]


def test_a_request_renamed_away_and_back_while_answered_is_answered(
    served: Path, tmp_path: Path, start_daemon: Callable[..., Path]
) -> None:
    # A rename keeps inode, size and mtime: the file renamed back is the version the
    # withdrawn attempt read, and was taken for one already handled (never answered).
    gate, request = _under_way(served, tmp_path, start_daemon)
    parked = served / "parked.md"
    os.rename(request, parked)
    (gate / "go").touch()
    wait_until(lambda: published(served).get("skipped"), timeout=60, what="the attempt to end")
    os.rename(parked, request)
    assert wait_answered(request, timeout=30)["status"] == "ok"


def test_a_response_edited_while_the_daemon_answers_again_is_kept(
    served: Path, tmp_path: Path, start_daemon: Callable[..., Path]
) -> None:
    # The person edits the request, then opens the earlier response and writes in it while
    # the new answer runs: their text is kept beside the new response, and they are told.
    gate = _gated(served, tmp_path)
    (gate / "go").touch()
    start_daemon(served)
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    assert wait_answered(request, timeout=60)["revision"] == 1
    response = response_for(request)
    (gate / "go").unlink()
    (gate / "started").unlink()
    request.write_text(request_text("Explain the README and the licence"), encoding="utf-8")
    wait_until((gate / "started").exists, timeout=60, what="the second answer")
    note = "\n## My Notes\n\nStep 2 is done; the licence is MIT (decided with Ana).\n"
    with response.open("a", encoding="utf-8") as fh:
        fh.write(note)
    mine = response.read_bytes()
    (gate / "go").touch()
    meta = wait_answered(request, timeout=60)
    assert meta["revision"] == 2
    [kept] = request.parent.glob("*_plan_response.edited-*.md")
    assert kept.read_bytes() == mine
    assert any(kept.name in w and "had been changed" in w for w in meta["warnings"])
    records = wait_until(
        lambda: [r for r in _log_records(served) if r.get("msg", "").startswith("kept a ")],
        what="the log line naming the kept file",
    )
    assert records[0]["kept"] == str(kept) and records[0]["response"] == str(response)
    # Nothing more happens: the kept file is neither a request nor a response.
    later = served / ".scratchpad_logs" / "2025-05-08T14_03_00_plan_request.md"
    later.write_text(request_text("Explain the tests"), encoding="utf-8")
    wait_answered(later, timeout=60)
    assert list(request.parent.glob("*_plan_response.edited-*.md")) == [kept]
    assert front_matter(response)["revision"] == 2


def test_a_refusal_someone_edited_is_kept_when_it_is_written_again(
    served: Path, tmp_path: Path
) -> None:
    secret = _secret_file(tmp_path)
    request = served / ".scratchpad_logs" / "2025-05-08T14_02_11_plan_request.md"
    request.symlink_to(secret)
    layout, config = find_repo(served), load_config(served)
    assert answer_claimed(request, layout, config).status == "error"
    response = response_for(request)
    response.write_text(response.read_text(encoding="utf-8") + "\nAsked Bo to fix it.\n")
    outcome = answer_claimed(request, layout, config, force=True)
    assert outcome.status == "error" and outcome.revision == 2
    [kept] = request.parent.glob("*_plan_response.edited-*.md")
    assert kept.read_text(encoding="utf-8").endswith("\nAsked Bo to fix it.\n")
    assert [k.path for k in outcome.kept] == [kept]
    assert any(kept.name in w for w in front_matter(response)["warnings"])
