"""run_checks on real repositories: the snapshot is what runs, the live tree is untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from nexusd.config import config_from_mapping
from nexusd.paths import find_repo
from nexusd.sandbox.runner import attach_results, note_payload, overall_status, run_checks
from tests.conftest import git

CHECKS = [
    {"name": "content", "run": "cat README.md; ls"},
    {"name": "fails", "run": "echo 'assert False' > t.py && python3 t.py", "when": "commit"},
]


def _config(backend: str, **sandbox: Any) -> Any:
    return config_from_mapping({"sandbox": {"backend": backend, **sandbox}, "checks": CHECKS})


def test_working_tree_snapshot_runs_and_live_tree_is_untouched(repo: Path, backend: str) -> None:
    (repo / "README.md").write_text("# uncommitted edit\n")
    (repo / "extra.txt").write_text("new\n")
    status = git(repo, "status", "--porcelain")
    results = run_checks(find_repo(repo), _config(backend))
    content, fails = results
    assert content.backend == backend and content.status == "passed"
    assert "# uncommitted edit" in content.stdout and "extra.txt" in content.stdout
    assert fails.status == "failed" and "AssertionError" in fails.stderr
    assert content.tree == fails.tree and len(content.tree) == 40
    assert git(repo, "status", "--porcelain") == status
    assert not (repo / "t.py").exists()
    assert content.isolated == (backend != "subprocess")


def test_a_commit_runs_as_it_was(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("# later\n")
    (result,) = run_checks(find_repo(repo), _config("subprocess"), treeish=head, names=["content"])
    assert result.stdout.startswith("# demo")


def test_when_selects_checks(repo: Path) -> None:
    results = run_checks(find_repo(repo), _config("subprocess"), when="commit")
    assert [r.name for r in results] == ["fails"]
    assert run_checks(find_repo(repo), _config("subprocess"), when="manual") == ()


@pytest.mark.docker
def test_missing_image_is_an_error_result_saying_how_to_fix(repo: Path, docker_client: Any) -> None:
    config = _config("docker", image="nexusd-test-missing:none")
    results = run_checks(find_repo(repo), config, names=["content"])
    assert results[0].status == "error"
    assert "--setup-script" in results[0].error


@pytest.mark.docker
def test_auto_prefers_docker_and_records_why(repo: Path, docker_client: Any) -> None:
    (result,) = run_checks(find_repo(repo), _config("auto"), names=["content"])
    assert result.backend == "docker"
    assert "auto: docker engine reachable" in result.reason


@pytest.mark.bwrap
def test_auto_falls_back_with_the_reason(repo: Path, bwrap_usable: None) -> None:
    config = _config("auto", image="nexusd-test-missing:none")
    (result,) = run_checks(find_repo(repo), config, names=["content"])
    assert result.backend == "bwrap"
    assert "docker unavailable" in result.reason
    # What docker lacks: the image when the engine answers, else the engine itself.
    assert "nexusd-test-missing:none" in result.reason or "Docker Engine" in result.reason
    assert result.warnings[0].startswith("sandbox.backend is auto and checks ran on bwrap")


def test_results_attach_to_a_checkpoint_note(repo: Path) -> None:
    from nexusd.checkpoint.notes import check_status, read_note

    layout = find_repo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    results = run_checks(layout, _config("subprocess"), treeish=head)
    attach_results(layout, head, results)
    note = read_note(layout, head)
    assert check_status(note) == overall_status(results) == "failed"
    assert note["checks"]["results"]["fails"]["status"] == "failed"
    assert note == note_payload(results) | {}


def test_the_result_names_what_its_snapshot_left_out(
    repo: Path, make_repo: Any, backend: str
) -> None:
    # The check runs on something else than the working tree: its result must say so.
    (repo / "big.bin").write_bytes(b"x" * 2048)
    (repo / "link").symlink_to("/etc/hostname")
    nested = make_repo("repo/vendored")  # a nested repository with a commit: a gitlink
    assert (nested / "README.md").exists()
    config = config_from_mapping(
        {
            "sandbox": {"backend": backend},
            "checkpoint": {"max_untracked_file_bytes": 1024},
            "checks": [{"name": "ls", "run": "ls -A vendored; readlink link; ls"}],
        }
    )
    (result,) = run_checks(find_repo(repo), config)
    assert result.status == "passed", result.stderr
    # `vendored` is an empty folder; the link is there, as the tree has it.
    assert result.stdout.split()[0] == "/etc/hostname"
    assert "big.bin" not in result.stdout
    (warning,) = [w for w in result.warnings if "leaves out" in w]
    assert "2 path(s)" in warning
    assert "big.bin (untracked, over 1024 bytes)" in warning
    assert "vendored (a submodule or nested repository" in warning


def test_the_check_sees_converted_files_as_they_are_on_disk(repo: Path) -> None:
    # `git archive` converts each file for the working tree: an as-is checkpoint tree would
    # have been converted twice (another `$Id`, a UTF-16 file encoded again).
    (repo / ".gitattributes").write_bytes(b"*.txt ident\n*.u16 working-tree-encoding=UTF-16LE\n")
    (repo / "id.txt").write_bytes(b"$Id$\nhello\n")
    (repo / "w.u16").write_bytes("hi\n".encode("utf-16-le"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "converted")
    for name in ("id.txt", "w.u16"):
        (repo / name).unlink()
    git(repo, "checkout", "--", ".")  # as a clone writes them: `$Id: <blob> $`, UTF-16
    disk = {name: (repo / name).read_bytes() for name in ("id.txt", "w.u16")}
    assert disk["id.txt"].startswith(b"$Id: ")
    checks = [{"name": "bytes", "run": "od -An -c id.txt w.u16"}]
    config = config_from_mapping({"sandbox": {"backend": "subprocess"}, "checks": checks})
    (result,) = run_checks(find_repo(repo), config)
    expected = subprocess.run(
        ["od", "-An", "-c", "id.txt", "w.u16"], cwd=repo, capture_output=True, check=True
    ).stdout.decode()
    assert result.status == "passed"
    assert result.stdout == expected
