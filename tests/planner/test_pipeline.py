from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nexusd.config import Config, config_from_mapping, load_config
from nexusd.paths import find_repo
from nexusd.planner.pipeline import answer_request, build_response, read_request
from nexusd.protocol.documents import STANDARD_SECTIONS
from nexusd.protocol.render import markdown_sections, read_response_meta, render_response
from nexusd.protocol.seal import seal_state
from nexusd.protocol.yamlio import split_front_matter
from nexusd.templates.scaffold import scaffold
from tests.conftest import git
from tests.plan_helpers import kitchen_repo

# A repository with code: the code index's section follows the analysis.
WITH_CODE = [STANDARD_SECTIONS[0], "Relevant Code", *STANDARD_SECTIONS[1:]]

NAME = "2025-05-08T14_02_11_plan_request.md"
CANONICAL = """---
cycle: 3
goal: Find and fix the lost-order race on the overflow shelf
blockers:
  - Order lost on the overflow shelf under contention
artifacts:
  - kitchen/shelves.py
---

## Analysis

Is one lock enough?
"""


def _write(root: Path, data: bytes | str, name: str = NAME) -> Path:
    folder = root / ".scratchpad_logs"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _meta(path: Path) -> dict[str, object]:
    meta = read_response_meta(path.read_text(encoding="utf-8"))
    assert meta is not None
    return meta


def _sections(path: Path) -> list[str]:
    split = split_front_matter(path.read_text(encoding="utf-8"))
    assert split is not None
    return [s.title for s in markdown_sections(split.body)[1]]


def _cfg(**layer: object) -> Config:
    return config_from_mapping(layer)


def test_answer_writes_a_grounded_response(repo: Path) -> None:
    kitchen_repo(repo)
    request = _write(repo, CANONICAL)
    outcome = answer_request(request, find_repo(repo), _cfg())
    assert outcome.status == "ok", outcome.message
    assert outcome.response_path == request.with_name("2025-05-08T14_02_11_plan_response.md")
    assert outcome.revision == 1
    assert outcome.sha256 == hashlib.sha256(CANONICAL.encode()).hexdigest()
    assert {"read", "parse", "librarian", "architect", "render", "write", "total"} <= set(
        outcome.timings_ms
    )
    meta = _meta(outcome.response_path)
    assert meta["request_sha256"] == outcome.sha256
    assert meta["request_file"] == NAME
    assert (meta["status"], meta["planner"], meta["revision"], meta["cycle"]) == (
        "ok",
        "offline",
        1,
        3,
    )
    assert {"read", "parse", "librarian", "librarian.git", "architect"} <= set(meta["timings_ms"])  # type: ignore[arg-type]
    # The six Template A sections (the code index's after the analysis), then the checkpoint.
    assert _sections(outcome.response_path) == [*WITH_CODE, "Checkpoint"]
    # The shelf code ranks first: the request names it and shares its rare words.
    assert meta["relevant_files"][0] == "kitchen/shelves.py"  # type: ignore[index]
    checkpoint = meta["checkpoint"]
    assert isinstance(checkpoint, str)
    assert meta["restore"] == f"nexusd checkpoint restore {checkpoint}"
    assert git(repo, "rev-parse", "--verify", f"refs/nexus/checkpoints/{checkpoint}").strip()
    text = outcome.response_path.read_text()
    assert "# Plan for cycle 3: Find and fix the lost-order race" in text
    assert "offline planner" in text
    assert "`kitchen/shelves.py:" in text  # evidence from the real file
    assert oct(outcome.response_path.stat().st_mode & 0o777) == "0o644"


def test_the_files_nexusd_init_writes_are_not_uncommitted_changes(repo: Path) -> None:
    kitchen_repo(repo)
    scaffold(find_repo(repo))  # .nexus/, MEMORY.md, memory/daily/, .scratchpad_logs/: untracked
    request = _write(repo, CANONICAL.replace("cycle: 3", "cycle: 1"))
    outcome = answer_request(request, find_repo(repo), _cfg())
    text = outcome.response_path.read_text()
    assert "with no uncommitted changes (nexusd's own files not counted)." in text
    assert "- The working tree is clean (nexusd's own files aside)." in text
    # Nothing before this cycle and no checks configured: the plan says so, not otherwise.
    assert "With no previous cycle found, the plan starts from the working tree as it is, " in text
    assert "reproduces the bug and each blocker with a failing test" in text
    assert "reviewing the previous cycle" not in text
    assert "No checks are configured (`checks:` in `.nexus/config.yaml`): Run `pytest -q`" in text
    assert "- `nexusd check`: none is configured yet;" in text
    (repo / "notes.txt").write_text("work in progress\n")
    outcome = answer_request(request, find_repo(repo), _cfg(), force=True)
    text = outcome.response_path.read_text()
    assert "with 1 uncommitted change(s) (nexusd's own files not counted)" in text
    assert "`??` `notes.txt`" in text  # a path, as inline code like every other


def test_same_content_is_answered_once(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    first = answer_request(request, find_repo(repo), _cfg())
    before = first.response_path.read_bytes()
    stat = first.response_path.stat()
    again = answer_request(request, find_repo(repo), _cfg())
    assert again.status == "skipped"
    assert (again.revision, again.sha256) == (1, first.sha256)
    assert first.response_path.read_bytes() == before
    assert first.response_path.stat().st_ino == stat.st_ino


def test_edited_request_gets_revision_two_replacing_the_file(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    first = answer_request(request, find_repo(repo), _cfg())
    inode = first.response_path.stat().st_ino
    _write(repo, CANONICAL.replace("Is one lock enough?", "Is one lock enough, really?"))
    second = answer_request(request, find_repo(repo), _cfg())
    assert second.status == "ok"
    assert second.revision == 2
    assert second.sha256 != first.sha256
    meta = _meta(second.response_path)
    assert (meta["revision"], meta["request_sha256"]) == (2, second.sha256)
    # Replaced by rename (atomic), not rewritten in place; no temporary files left.
    assert second.response_path.stat().st_ino != inode
    assert sorted(p.name for p in request.parent.iterdir()) == [
        NAME,
        "2025-05-08T14_02_11_plan_response.md",
    ]
    assert answer_request(request, find_repo(repo), _cfg()).status == "skipped"


def test_force_answers_again_with_next_revision(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    answer_request(request, find_repo(repo), _cfg())
    forced = answer_request(request, find_repo(repo), _cfg(), force=True)
    assert (forced.status, forced.revision) == ("ok", 2)


def test_a_response_not_written_by_nexusd_is_kept(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    foreign = request.with_name("2025-05-08T14_02_11_plan_response.md")
    foreign.write_text("# A human wrote this plan\n")
    outcome = answer_request(request, find_repo(repo), _cfg())
    assert outcome.status == "skipped"
    assert "not written by nexusd" in outcome.message
    assert foreign.read_text() == "# A human wrote this plan\n"
    assert answer_request(request, find_repo(repo), _cfg(), force=True).status == "ok"
    assert _meta(foreign)["revision"] == 1


BAD = [
    pytest.param(b"", "the request is empty", None, id="empty"),
    pytest.param(b"   \n\n", "the request is empty", None, id="blank"),
    pytest.param(b"PK\x03\x04\x00\x00binary", "binary", None, id="binary"),
    pytest.param("goal: caf\xe9\n".encode("latin-1"), "not valid UTF-8", None, id="latin-1"),
    pytest.param(b"---\nproject: demo\ncycle: 2\n---\n", "no goal", "goal", id="missing-goal"),
    pytest.param(b"---\ngoal: [unclosed\n---\n", "", None, id="bad-yaml"),
    pytest.param(b"---\ngoal: x\ncycle: three\n---\n", "cycle", "cycle", id="bad-cycle"),
]


@pytest.mark.parametrize(("data", "message", "field"), BAD)
def test_bad_requests_get_an_error_response(
    repo: Path, data: bytes, message: str, field: str | None
) -> None:
    request = _write(repo, data)
    outcome = answer_request(request, find_repo(repo), _cfg())
    assert outcome.status == "error"
    assert message in outcome.message
    meta = _meta(outcome.response_path)
    assert meta["status"] == "error"
    assert meta["request_sha256"] == hashlib.sha256(data).hexdigest()
    error = meta["error"]
    assert isinstance(error, dict)
    assert error["message"] and error["fix"]
    if field:
        assert error["field"] == field
    assert _sections(outcome.response_path) == ["What Is Wrong", "How to Fix It", "Example"]
    text = outcome.response_path.read_text()
    assert "goal: Make the login test pass reliably" in text  # the example request
    # The same bad content is not answered twice either.
    assert answer_request(request, find_repo(repo), _cfg()).status == "skipped"


def test_request_over_the_size_cap(repo: Path) -> None:
    data = ("---\ngoal: big\n---\n" + "x" * 5000).encode()
    request = _write(repo, data)
    cfg = _cfg(watch={"max_request_bytes": 1000})
    raw = read_request(request, 1000)
    assert len(raw.data) == 1001  # never more than cap + 1 bytes in memory
    assert raw.size == len(data)
    assert raw.sha256 == hashlib.sha256(data).hexdigest()
    outcome = answer_request(request, find_repo(repo), cfg)
    assert outcome.status == "error"
    assert "over the 1000-byte limit" in outcome.message
    error = _meta(outcome.response_path)["error"]
    assert isinstance(error, dict) and "max_request_bytes" in error["fix"]


def test_response_path_taken_by_a_folder_is_an_error_outcome(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    request.with_name("2025-05-08T14_02_11_plan_response.md").mkdir()
    outcome = answer_request(request, find_repo(repo), _cfg(), force=True)
    assert outcome.status == "error"
    assert outcome.message.startswith("cannot write")
    assert outcome.revision == 1 and outcome.sha256


def test_request_whose_parent_is_a_file(repo: Path) -> None:
    (repo / "afile").write_text("not a folder\n")
    request = repo / "afile" / NAME
    outcome = answer_request(request, find_repo(repo), _cfg())
    assert outcome.status == "error"
    assert outcome.message.startswith("cannot read")
    assert not outcome.response_path.exists()


UNWRITABLE = """
import json, resource, signal, sys
from pathlib import Path
from nexusd.config import load_config
from nexusd.paths import find_repo
from nexusd.planner.pipeline import answer_request
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
# Root ignores file modes; a file-size limit makes every write of the response fail.
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
layout = find_repo(Path(sys.argv[1]))
o = answer_request(Path(sys.argv[1]), layout, load_config(layout.root))
print(json.dumps({"status": o.status, "message": o.message}))
"""


def test_unwritable_response_is_reported_not_raised(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    proc = subprocess.run(
        [sys.executable, "-c", UNWRITABLE, str(request)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "error"
    assert "cannot write" in result["message"]
    assert not request.with_name("2025-05-08T14_02_11_plan_response.md").exists()
    assert [p.name for p in request.parent.iterdir()] == [NAME]  # no temp file left behind


def test_configuration_errors_write_an_error_response_and_retry_later(repo: Path) -> None:
    # A client waiting for the response gets one; it is answered anew once the config works.
    request = _write(repo, CANONICAL)
    cfg = _cfg(planner={"catalog": "practices.yaml"})
    outcome = answer_request(request, find_repo(repo), cfg)
    assert outcome.status == "error"
    assert "planner.catalog" in outcome.message
    meta = yaml.safe_load(outcome.response_path.read_text().split("---\n")[1])
    assert meta["status"] == "error" and meta["error"]["kind"] == "setup"
    assert meta["request_sha256"] == outcome.sha256 and meta["revision"] == 1
    assert "answers it again" in outcome.response_path.read_text()
    # The same failure again: reported, the file is left as it is (no revision churn).
    before = outcome.response_path.read_bytes()
    again = answer_request(request, find_repo(repo), cfg)
    assert again.status == "error" and outcome.response_path.read_bytes() == before
    (repo / "practices.yaml").write_text(
        "entries:\n  - id: a\n    title: A\n    keywords: [race]\n    practice: Do A.\n"
    )
    fixed = answer_request(request, find_repo(repo), cfg)
    assert (fixed.status, fixed.revision) == ("ok", 2)
    assert "**A.** Do A." in outcome.response_path.read_text()
    assert answer_request(request, find_repo(repo), cfg).status == "skipped"


def test_build_response_writes_nothing(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    response = build_response(request, find_repo(repo), _cfg(), revision=3)
    assert response.meta.revision == 3
    assert response.meta.status == "ok"
    # The repository holds only a README: no code to point at, so no Relevant Code section.
    assert [s.title for s in response.sections] == [*STANDARD_SECTIONS, "Checkpoint"]
    assert response.meta.relevant_files == ()
    assert list(request.parent.iterdir()) == [request]


def test_a_request_of_only_code_still_gets_a_goal(repo: Path) -> None:
    request = _write(repo, "```python\ndef get_users():\n    return 500\n```\n")
    response = build_response(request, find_repo(repo), _cfg())
    said = "Python code without a description: `def get_users():`"
    assert response.title == f"Plan: {said}"
    analysis = response.sections[0].body
    goal = next(line for line in analysis.splitlines() if line.startswith("**Goal:**"))
    assert goal.startswith(
        "**Goal:** The request gives only Python code, no description of what to do with it; "
        "it starts `def get_users():`."
    )
    assert "```" not in render_response(response)  # no fence left in a title or a line


@pytest.mark.parametrize(
    ("fixture", "headings"),
    [
        ("2025-05-08T14_02_11_plan_request.md", [*WITH_CODE, "Checkpoint"]),
        (
            "2025-04-20T08_11_37_plan_request.md",
            [
                "Key Challenges and Analysis",
                "Verifiable Success Criteria",
                "High-level Task Breakdown",
                "Next Steps and Action Items",
            ],
        ),
    ],
)
def test_oppie_fixtures(repo: Path, shared_dir: Path, fixture: str, headings: list[str]) -> None:
    kitchen_repo(repo)
    request = _write(repo, (shared_dir / "fixtures" / "oppie" / fixture).read_bytes(), fixture)
    outcome = answer_request(request, find_repo(repo), _cfg())
    assert outcome.status == "ok", outcome.message
    assert _sections(outcome.response_path) == headings


def test_previous_cycle_is_read_through_history_path(repo: Path) -> None:
    kitchen_repo(repo)
    first = _write(
        repo, CANONICAL.replace("cycle: 3", "cycle: 2"), "2025-05-08T11_40_03_plan_request.md"
    )
    answered = answer_request(first, find_repo(repo), _cfg())
    second = _write(
        repo,
        CANONICAL.replace(
            "artifacts:",
            "history_path: .scratchpad_logs/2025-05-08T11_40_03_plan_response.md\nartifacts:",
        ),
    )
    outcome = answer_request(second, find_repo(repo), _cfg())
    text = outcome.response_path.read_text()
    assert "**Review cycle 2: compare its plan with what happened.**" in text
    assert "**Justification.** The plan starts by reviewing the previous cycle so" in text
    assert "  1. Review the starting point (no previous cycle found)." in text
    assert "Its follow-up checklist: 0 of 6 ticked." in text
    assert (
        f"`{answered.response_path.relative_to(repo).as_posix()}` (history_path; planner offline"
        in text
    )


def test_pipeline_import_stays_light() -> None:
    code = (
        "import sys, nexusd.planner.pipeline\n"
        "heavy = ('torch', 'sentence_transformers', 'lancedb', 'docker', 'watchdog', 'git')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert proc.stdout.strip() == ""


def test_a_routed_model_writes_the_plan_and_usage_lands_in_front_matter(
    repo: Path, tmp_path: Path
) -> None:
    """The architect routed to a real CLI agent (a script here) writes the plan."""
    answer = {
        "analysis": "The overflow shelf is read and written without its lock.",
        "actions": [
            {
                "title": "Take the overflow lock in place()",
                "details": "Hold overflow.lock around the read and the write.",
                "target_files": ["kitchen/shelves.py"],
                "verify": "python3 -m unittest -q",
            }
        ],
        "blocker_solutions": [{"blocker": "lost order", "solution": "One lock, one order."}],
        "best_practices": ["Never hold two shelf locks at once."],
        "tool_calls": [{"tool": "pytest", "args": "-x", "purpose": "verify"}],
        "risks": ["Contention on the overflow shelf."],
        "checklist": ["Run the stress test 50 times."],
    }
    agent = tmp_path / "agent.py"
    agent.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(answer)!r})\n")
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(
        "planner: {provider: agent}\n"
        "providers:\n"
        f"  agent: {{type: command, command: [{sys.executable}, {agent}], model: scripted}}\n",
        encoding="utf-8",
    )
    request = _write(repo, CANONICAL)
    outcome = answer_request(request, find_repo(repo), load_config(repo))
    assert outcome.status == "ok", outcome.message
    meta = _meta(outcome.response_path)
    assert meta["planner"] == "agent:scripted"
    usage = meta["model_usage"]
    assert isinstance(usage, dict) and usage["provider"] == "agent"
    text = outcome.response_path.read_text(encoding="utf-8")
    assert "Take the overflow lock in place()" in text
    events = [
        json.loads(line)
        for line in (find_repo(repo).logs_dir / "telemetry.jsonl").read_text().splitlines()
    ]
    assert {"plan", "request"} <= {e["event"] for e in events}


EDIT = "\n- [x] 1. done: the lock is in (my note, PR 12)\n"
KEPT_GLOB = "2025-05-08T14_02_11_plan_response.edited-*.md"


def _kept(request: Path) -> list[Path]:
    return sorted(request.parent.glob(KEPT_GLOB))


def test_a_response_edited_before_its_request_changed_is_kept(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    first = answer_request(request, find_repo(repo), _cfg())
    response = first.response_path
    with response.open("a", encoding="utf-8") as fh:  # the person ticks an item, adds a note
        fh.write(EDIT)
    edited = response.read_bytes()
    _write(repo, CANONICAL.replace("Is one lock enough?", "Is one lock enough, really?"))
    second = answer_request(request, find_repo(repo), _cfg())
    assert (second.status, second.revision) == ("ok", 2)
    [kept] = _kept(request)
    assert kept.read_bytes() == edited  # every byte the person had
    assert [(k.path, k.edited) for k in second.kept] == [(kept, True)]
    warnings = _meta(response)["warnings"]
    assert isinstance(warnings, list)
    assert any(kept.name in w and "had been changed" in w for w in warnings)
    assert EDIT not in response.read_text(encoding="utf-8")
    # The kept file is no request and no response: nothing answers it, nothing more is kept.
    assert answer_request(request, find_repo(repo), _cfg()).status == "skipped"
    _write(repo, CANONICAL.replace("Is one lock enough?", "Is one lock enough, twice?"))
    assert answer_request(request, find_repo(repo), _cfg()).kept == ()
    assert _kept(request) == [kept]


def test_force_keeps_an_edited_response_and_replaces_an_unchanged_one(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    response = answer_request(request, find_repo(repo), _cfg()).response_path
    assert answer_request(request, find_repo(repo), _cfg(), force=True).kept == ()
    assert _kept(request) == []
    response.write_text(response.read_text(encoding="utf-8") + EDIT, encoding="utf-8")
    forced = answer_request(request, find_repo(repo), _cfg(), force=True)
    assert (forced.status, forced.revision) == ("ok", 3)
    [kept] = _kept(request)
    assert kept.read_text(encoding="utf-8").endswith(EDIT)


def test_force_keeps_a_response_nexusd_did_not_write(repo: Path) -> None:
    request = _write(repo, CANONICAL)
    foreign = request.with_name("2025-05-08T14_02_11_plan_response.md")
    foreign.write_text("# A human wrote this plan\n", encoding="utf-8")
    assert answer_request(request, find_repo(repo), _cfg()).status == "skipped"
    forced = answer_request(request, find_repo(repo), _cfg(), force=True)
    assert forced.status == "ok"
    [kept] = _kept(request)
    assert kept.read_text(encoding="utf-8") == "# A human wrote this plan\n"
    assert [k.edited for k in forced.kept] == [False]


def test_a_response_of_an_older_nexusd_without_a_seal_is_kept(repo: Path) -> None:
    # Whether it was edited cannot be told: it is kept rather than lost, once.
    request = _write(repo, CANONICAL)
    response = answer_request(request, find_repo(repo), _cfg()).response_path
    text = response.read_text(encoding="utf-8")
    unsealed = "".join(ln for ln in text.splitlines(True) if not ln.startswith("response_sha256:"))
    response.write_text(unsealed, encoding="utf-8")
    _write(repo, CANONICAL.replace("Is one lock enough?", "Is one lock enough, really?"))
    second = answer_request(request, find_repo(repo), _cfg())
    assert second.revision == 2  # still read as nexusd's response, its revision counted on
    [kept] = _kept(request)
    assert kept.read_text(encoding="utf-8") == unsealed
    warnings = _meta(response)["warnings"]
    assert isinstance(warnings, list) and any("older nexusd" in w for w in warnings)


def test_a_response_edited_while_its_request_is_answered_is_kept(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plan takes seconds to minutes; the person edits the earlier response meanwhile.
    import nexusd.planner.pipeline as pipeline

    request = _write(repo, CANONICAL)
    response = answer_request(request, find_repo(repo), _cfg()).response_path
    _write(repo, CANONICAL.replace("Is one lock enough?", "Is one lock enough, really?"))
    real = pipeline.respond

    def edited_meanwhile(*args: object, **kwargs: object) -> object:
        planned = real(*args, **kwargs)  # type: ignore[arg-type]
        with response.open("a", encoding="utf-8") as fh:
            fh.write(EDIT)
        return planned

    monkeypatch.setattr(pipeline, "respond", edited_meanwhile)
    second = answer_request(request, find_repo(repo), _cfg())
    assert second.status == "ok" and len(second.kept) == 1
    [kept] = _kept(request)
    assert kept.read_text(encoding="utf-8").endswith(EDIT)
    assert seal_state(response.read_bytes()) == "intact"
