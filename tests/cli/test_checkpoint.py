"""`nexusd checkpoint …` end to end through click."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.protocol.render import read_response_meta


def run(repo: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["checkpoint", *args, "-C", str(repo)])
    assert result.exit_code == code, result.output
    return result.output


def test_create_list_show_diff_restore_drop(repo: Path) -> None:
    (repo / "README.md").write_text("v1\n")
    made = json.loads(run(repo, "create", "-m", "first try", "--json"))
    assert made["reason"] == "manual"
    assert made["restore_command"] == f"nexusd checkpoint restore {made['id']}"
    rows = json.loads(run(repo, "list", "--json"))
    assert [r["id"] for r in rows] == [made["id"]]
    assert rows[0]["files_changed"] == 1
    assert rows[0]["branch"] == "main"
    assert set(rows[0]) >= {"id", "time", "reason", "cycle", "branch", "files_changed", "checks"}
    assert made["id"] in run(repo, "list")
    assert "first try" in run(repo, "show", made["id"], "--json")

    (repo / "README.md").write_text("v2\n")
    (repo / "scratch.txt").write_text("new\n")
    diff = run(repo, "diff", made["id"])
    assert "-v1" in diff and "+v2" in diff and "scratch.txt" in diff
    dry = run(repo, "restore", made["id"], "--dry-run")
    assert "would change 2 path(s)" in dry
    assert "delete  scratch.txt" in dry and "modify  README.md" in dry
    assert (repo / "README.md").read_text() == "v2\n"
    out = run(repo, "restore", made["id"])
    assert "undo with: nexusd checkpoint restore" in out
    assert (repo / "README.md").read_text() == "v1\n"
    assert not (repo / "scratch.txt").exists()
    undo = out.rsplit("restore ", 1)[1].strip()
    run(repo, "restore", undo)
    assert (repo / "scratch.txt").read_text() == "new\n"

    rows = json.loads(run(repo, "list", "--json"))
    assert [r["reason"] for r in rows] == ["manual", "pre-restore", "pre-restore"]
    second = rows[1]["id"]
    stat = run(repo, "diff", made["id"], second, "--stat")
    assert "scratch.txt" in stat and "README.md" in stat
    assert "dropped" in run(repo, "drop", second)
    assert len(json.loads(run(repo, "list", "--json"))) == 2


def test_restore_paths(repo: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text("old\n")
    made = json.loads(run(repo, "create", "--json"))
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text("new\n")
    out = json.loads(
        run(
            repo,
            "restore",
            made["id"],
            "--paths",
            str(repo / "a.txt"),
            str(repo / "b.txt"),
            "--json",
        )
    )
    assert sorted(c["path"] for c in out["changes"]) == ["a.txt", "b.txt"]
    assert [(repo / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == [
        "old\n",
        "old\n",
        "new\n",
    ]


def test_unknown_id_is_an_error_with_suggestions(repo: Path) -> None:
    made = json.loads(run(repo, "create", "--json"))
    wrong = made["id"][:-2] + "zz"
    result = CliRunner().invoke(cli, ["checkpoint", "restore", wrong, "-C", str(repo)])
    assert result.exit_code == 5
    assert "did you mean" in result.output and made["id"] in result.output


def test_gc_dry_run(repo: Path) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        "checkpoint:\n  retention:\n    keep_last: 1\n    keep_days: 0\n    daily_beyond: false\n"
    )
    for _ in range(3):
        run(repo, "create")
    out = run(repo, "gc", "--dry-run")
    assert "kept 1, would drop 2" in out
    assert len(json.loads(run(repo, "list", "--json"))) == 3
    report = json.loads(run(repo, "gc", "--json"))
    assert len(report["dropped"]) == 2
    assert len(json.loads(run(repo, "list", "--json"))) == 1


def test_push_and_fetch(repo: Path, tmp_path: Path) -> None:
    import subprocess

    remote = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    made = json.loads(run(repo, "create", "--json"))
    run(repo, "push", str(remote))
    listed = subprocess.run(
        ["git", "for-each-ref", "refs/nexus/"],
        cwd=remote,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert made["commit"] in listed
    run(repo, "drop", made["id"])
    run(repo, "fetch", str(remote))
    assert [r["id"] for r in json.loads(run(repo, "list", "--json"))] == [made["id"]]


def test_restoring_a_responses_checkpoint_keeps_the_newer_answer(repo: Path) -> None:
    # The checkpoint a revision-2 response names was taken before that response was
    # written, so restoring it must not put the revision-1 answer back beside request v2.
    (repo / ".nexus").mkdir()
    request = repo / "plans" / "2025-01-01T00_00_00_plan_request.md"
    request.parent.mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        "memory:\n  enabled: false\nwatch:\n  paths: [plans]\n"
    )
    response = request.with_name("2025-01-01T00_00_00_plan_response.md")
    runner = CliRunner()
    for goal in ("first goal", "second goal"):
        request.write_text(f"---\ngoal: {goal}\n---\n")
        result = runner.invoke(cli, ["plan", "--no-memory", str(request)])
        assert result.exit_code == 0, result.output
    meta = read_response_meta(response.read_text())
    assert meta is not None and meta["revision"] == 2
    (repo / "app.py").write_text("changed after the plan\n")
    out = run(repo, "restore", str(meta["checkpoint"]))
    assert "skip    plans/2025-01-01T00_00_00_plan_response.md" in out
    assert not (repo / "app.py").exists()
    assert read_response_meta(response.read_text()) == meta


def test_restore_paths_are_relative_to_the_c_folder(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "a.txt").write_text("old\n")
    (repo / "b.txt").write_text("old\n")
    made = json.loads(run(repo, "create", "--json"))
    (repo / "a.txt").write_text("new\n")
    (repo / "b.txt").write_text("new\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # -C names the repository; the paths are relative to it
    out = json.loads(run(repo, "restore", made["id"], "a.txt", "--json"))
    assert [c["path"] for c in out["changes"]] == ["a.txt"]
    assert (repo / "a.txt").read_text() == "old\n"
    assert (repo / "b.txt").read_text() == "new\n"


def test_restore_of_a_path_in_neither_tree_is_an_error(repo: Path) -> None:
    made = json.loads(run(repo, "create", "--json"))
    (repo / "README.md").write_text("changed\n")
    out = run(repo, "restore", made["id"], "no-such-file.txt", code=10)
    assert "no-such-file.txt" in out and "nor in the working tree" in out
    # Refused before the pre-restore snapshot: nothing to clean up, nothing changed.
    assert [r["id"] for r in json.loads(run(repo, "list", "--json"))] == [made["id"]]
    assert (repo / "README.md").read_text() == "changed\n"


def test_create_and_show_name_what_the_checkpoint_left_out(repo: Path) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text("checkpoint:\n  max_untracked_file_bytes: 100\n")
    for i in range(25):
        (repo / f"big{i:02}.bin").write_bytes(b"x" * 200)
    made = json.loads(run(repo, "create", "--json"))
    assert made["left_out_count"] == 25
    assert made["left_out"][0] == {"path": "big00.bin", "why": "untracked, over 100 bytes"}
    assert len(made["left_out"]) == 20
    text = run(repo, "create")
    assert "left out 25 path(s):" in text
    assert "big19.bin  (untracked, over 100 bytes)" in text and "big20.bin" not in text
    assert "… and 5 more" in text
    shown = run(repo, "show", made["id"])
    assert "left out: 25 untracked file(s) over 100 bytes" in shown
    data = json.loads(run(repo, "show", made["id"], "--json"))
    assert data["left_out"] == ["25 untracked file(s) over 100 bytes"]


def test_a_broken_checkpoint_ref_is_named_and_can_be_dropped(repo: Path) -> None:
    made = json.loads(run(repo, "create", "--json"))
    broken = "20200101T000000Z-000001"
    ref = repo / ".git" / "refs" / "nexus" / "checkpoints" / broken
    ref.write_text("0123456789012345678901234567890123456789\n")
    result = CliRunner().invoke(cli, ["checkpoint", "list", "--json", "-C", str(repo)])
    assert result.exit_code == 0, result.output
    # The readable ones still list (as JSON on stdout); the broken one is named on stderr.
    assert [r["id"] for r in json.loads(result.stdout)] == [made["id"]]
    assert f"checkpoint {broken} cannot be read" in result.stderr
    assert f"nexusd checkpoint drop {broken}" in result.stderr
    out = run(repo, "restore", broken, code=5)
    assert "its commit is missing" in out
    assert f"dropped {broken}" in run(repo, "drop", broken)
    assert not ref.exists()
    assert "cannot be read" not in run(repo, "list")


def test_diff_of_a_checkpoint_git_cannot_read_is_an_error_not_an_empty_diff(repo: Path) -> None:
    (repo / "a.txt").write_text("a\n")
    made = json.loads(run(repo, "create", "--json"))
    tree = made["tree"]
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    (repo / "a.txt").write_text("b\n")  # else diff's snapshot of the working tree rewrites it
    for args in (("diff", made["id"]), ("diff", made["id"], "--stat"), ("show", made["id"])):
        out = run(repo, *args, code=5)
        assert tree in out and "git fsck" in out


def test_push_to_an_unknown_remote_says_how_to_name_one(repo: Path) -> None:
    run(repo, "create")
    for command in ("push", "fetch"):
        out = run(repo, command, "no-such-remote", code=5)
        assert "git remote -v" in out
        args = ["checkpoint", command, "no-such-remote", "--json", "-C", str(repo)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 5, result.output
        error = json.loads(result.stdout)["error"]  # push and fetch alike
        assert set(error) == {"kind", "message", "hint", "exit_code"}
        assert (error["kind"], error["exit_code"]) == ("GitError", 5)
        assert "git remote -v" in error["hint"]


def test_drop_json_names_what_was_dropped(repo: Path) -> None:
    made = json.loads(run(repo, "create", "--json"))
    dropped = json.loads(run(repo, "drop", made["id"], "--json"))
    assert dropped == {
        "id": made["id"],
        "ref": made["ref"],
        "commit": made["commit"],
        "broken": False,
    }
    assert json.loads(run(repo, "list", "--json")) == []
    broken = "20200101T000000Z-000001"
    ref = repo / ".git" / "refs" / "nexus" / "checkpoints" / broken
    ref.parent.mkdir(parents=True, exist_ok=True)  # git removed the emptied folder
    ref.write_text("0123456789012345678901234567890123456789\n")
    dropped = json.loads(run(repo, "drop", broken, "--json"))
    assert (dropped["id"], dropped["broken"]) == (broken, True)


def test_push_and_fetch_json_list_each_checkpoint(repo: Path, tmp_path: Path) -> None:
    import subprocess

    remote = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    first = json.loads(run(repo, "create", "--json"))
    pushed = json.loads(run(repo, "push", str(remote), "--json"))
    assert pushed["remote"] == str(remote)
    assert pushed["refs"] == [
        {"ref": first["ref"], "id": first["id"], "status": "new", "summary": "[new reference]"}
    ]
    again = json.loads(run(repo, "push", str(remote), "--json"))
    assert [(r["id"], r["status"]) for r in again["refs"]] == [(first["id"], "up_to_date")]
    (repo / "a.txt").write_text("a\n")
    second = json.loads(run(repo, "create", "--json"))
    run(repo, "push", str(remote))
    run(repo, "drop", first["id"])
    run(repo, "drop", second["id"])
    fetched = json.loads(run(repo, "fetch", str(remote), "--json"))
    assert fetched == {
        "remote": str(remote),
        "new": [
            {"ref": first["ref"], "id": first["id"]},
            {"ref": second["ref"], "id": second["id"]},
        ],
        "updated": [],
        "notes_merged": False,
    }
    assert json.loads(run(repo, "fetch", str(remote), "--json"))["new"] == []
    assert run(repo, "fetch", str(remote)) == "up to date\n"


def test_diff_json_lists_the_files_changed(repo: Path) -> None:
    (repo / "README.md").write_text("v1\nsame\n")
    (repo / "gone.txt").write_text("bye\n")
    (repo / "logo.bin").write_bytes(b"\0\1\2")
    made = json.loads(run(repo, "create", "--json"))
    (repo / "README.md").write_text("v2\nsame\nmore\n")
    (repo / "gone.txt").unlink()
    (repo / "logo.bin").write_bytes(b"\0\1\3")
    (repo / "new.txt").write_text("new\n")
    data = json.loads(run(repo, "diff", made["id"], "--json"))
    assert (data["from"], data["to"]) == (made["id"], None)  # None: the working tree
    assert data["files"] == [
        {"path": "README.md", "status": "modified", "added": 2, "deleted": 1},
        {"path": "gone.txt", "status": "deleted", "added": 0, "deleted": 1},
        {"path": "logo.bin", "status": "modified", "added": None, "deleted": None},
        {"path": "new.txt", "status": "added", "added": 1, "deleted": 0},
    ]
    later = json.loads(run(repo, "create", "--json"))
    between = json.loads(run(repo, "diff", made["id"], later["id"], "--json"))
    assert between == {**data, "to": later["id"]}
    assert json.loads(run(repo, "diff", later["id"], "--json"))["files"] == []


def test_diff_json_is_utf_8_json_for_a_file_name_that_is_not(repo: Path) -> None:
    import os

    made = json.loads(run(repo, "create", "--json"))
    name = b"caf\xe9 \xff.txt"  # Latin-1, as an old archive or another OS wrote it
    (repo / os.fsdecode(name)).write_text("x\n")
    result = CliRunner().invoke(cli, ["checkpoint", "diff", made["id"], "--json", "-C", str(repo)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout_bytes.decode("utf-8"))  # raised: byte 0xe9 is not UTF-8
    assert [os.fsencode(f["path"]) for f in data["files"]] == [name]


def test_push_json_names_the_refs_a_remote_rejected(repo: Path, tmp_path: Path) -> None:
    import subprocess

    remote = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert json.loads(run(repo, "push", str(remote), "--json")) == {
        "remote": str(remote),
        "refs": [],
    }  # no checkpoint yet: nothing to push, not git's "No refs in common"
    assert run(repo, "push", str(remote)) == "nothing to push\n"
    first = json.loads(run(repo, "create", "--json"))
    (repo / "a.txt").write_text("a\n")
    second = json.loads(run(repo, "create", "--json"))
    hook = remote / "hooks" / "update"
    hook.write_text(f'#!/bin/sh\n[ "$1" != "{second["ref"]}" ]\n')
    hook.chmod(0o755)
    result = CliRunner().invoke(cli, ["checkpoint", "push", str(remote), "--json", "-C", str(repo)])
    assert result.exit_code == 5, result.output
    data = json.loads(result.stdout)
    assert [(r["id"], r["status"]) for r in data["refs"]] == [
        (first["id"], "new"),
        (second["id"], "rejected"),
    ]
    assert data["error"]["exit_code"] == 5 and "failed to push" in data["error"]["message"]
