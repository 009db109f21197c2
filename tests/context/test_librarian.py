from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nexusd.context.librarian import ContextBundle
from nexusd.context.recall import MemoryEvidence
from tests.conftest import git
from tests.plan_helpers import bundle_for, config, kitchen_repo, request


def test_bundle_gathers_git_artifacts_blockers_tools(repo: Path) -> None:
    kitchen_repo(repo)
    (repo / "kitchen" / "shelves.py").write_text(
        "# dirty\n" + (repo / "kitchen/shelves.py").read_text()
    )
    bundle = bundle_for(repo, request())
    assert bundle.request_rel == ".scratchpad_logs/2025-05-08T14_02_11_plan_request.md"
    assert bundle.response_rel == ".scratchpad_logs/2025-05-08T14_02_11_plan_response.md"
    assert bundle.git.branch == "main"
    assert {d.path for d in bundle.git.dirty} >= {"kitchen/shelves.py"}
    assert [a.rel for a in bundle.artifacts] == [
        "kitchen/shelves.py",
        "kitchen/courier.py",
        "tests/test_concurrency.py",
    ]
    assert bundle.git.recent["kitchen/courier.py"][0].subject == "courier returns nothing"
    lost, timeout = bundle.blockers
    assert "overflow" in lost.words and "contention" in lost.words
    assert any("contention" in h.matched for h in lost.evidence)
    assert {h.path for h in timeout.evidence} == {"tests/test_concurrency.py"}
    assert lost.practices[0].practice.id == "concurrency-locks"
    assert [t.name for t in bundle.tools.tools] == ["run_pytest", "git_log", "read_file"]
    assert bundle.practices[0].practice.id == "concurrency-locks"
    assert bundle.goal_evidence and bundle.goal_evidence[0].path == "kitchen/shelves.py"
    assert set(bundle.timings_ms) == {"artifacts", "git", "evidence", "history", "toolchain"}
    assert bundle.previous is None
    assert bundle.warnings == ()


def test_refused_artifacts_become_warnings(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("x = 1\n")
    (repo / "escape.py").symlink_to(tmp_path / "secret.py")
    bundle = bundle_for(repo, request(artifacts=("escape.py", "../secret.py"), blockers=()))
    assert [a.status for a in bundle.artifacts] == ["refused", "refused"]
    assert len(bundle.warnings) == 2
    assert all("refused" in w for w in bundle.warnings)


def test_free_form_artifact_notes_are_kept(repo: Path) -> None:
    kitchen_repo(repo)
    req = request(
        artifacts=("kitchen/courier.py",),
        artifact_notes=(("kitchen/courier.py", "delivers orders"), ("kitchen/shelves.py", "")),
    )
    bundle = bundle_for(repo, req)
    assert [(a.rel, a.description) for a in bundle.artifacts] == [
        ("kitchen/courier.py", "delivers orders"),
        ("kitchen/shelves.py", ""),
    ]


def test_previous_cycle_and_missing_history_note(repo: Path) -> None:
    kitchen_repo(repo)
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    (folder / "2025-05-08T11_40_03_plan_response.md").write_text(
        "---\nrequest_sha256: x\nrevision: 1\nstatus: ok\ncycle: 2\nplanner: offline\n---\n"
        "## Plan\n\n1. First thing\n2. Second thing\n"
    )
    bundle = bundle_for(repo, request(history_path=".scratchpad_logs/gone_plan_response.md"))
    assert bundle.previous is not None
    assert bundle.previous.actions == ("First thing", "Second thing")
    assert bundle.previous.cycle == 2
    assert "does not exist" in bundle.previous.note


def test_configured_checks_are_in_the_bundle(repo: Path) -> None:
    cfg = config(checks=[{"name": "unit", "run": "pytest -q"}])
    bundle = bundle_for(repo, request(artifacts=(), blockers=()), cfg)
    assert [(c["name"], c["run"]) for c in bundle.checks] == [("unit", "pytest -q")]


def test_bundle_is_frozen_and_extensible(repo: Path) -> None:
    bundle = bundle_for(repo, request(artifacts=(), blockers=()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        bundle.checkpoint = "x"  # type: ignore[misc]
    later = dataclasses.replace(
        bundle,
        memory_hits=(
            MemoryEvidence("MEMORY.md:3", "lessons", "a lesson", 1.0, "lessons", ("goal",)),
        ),
        checkpoint="cp-1",
    )
    assert isinstance(later, ContextBundle)
    assert later.checkpoint == "cp-1" and bundle.checkpoint is None


def test_facts_are_fresh_on_every_call(repo: Path) -> None:
    first = bundle_for(repo, request(artifacts=("README.md",), blockers=()))
    (repo / "README.md").write_text("# demo\nmore\n")
    git(repo, "commit", "-qam", "second commit")
    second = bundle_for(repo, request(artifacts=("README.md",), blockers=()))
    assert first.artifacts[0].lines == 1 and second.artifacts[0].lines == 2
    assert second.git.head_subject == "second commit"
    assert second.git.recent["README.md"][0].subject == "second commit"


def test_large_requests_are_bounded(repo: Path) -> None:
    req = request(
        artifacts=tuple(f"f{i}.py" for i in range(25)),
        blockers=tuple(f"blocker number {i}" for i in range(12)),
    )
    bundle = bundle_for(repo, req)
    assert len(bundle.artifacts) == 20
    assert len(bundle.blockers) == 10
    assert "only the first 20 of 25 artifacts were read" in bundle.warnings
    assert "only the first 10 of 12 blockers were searched" in bundle.warnings
