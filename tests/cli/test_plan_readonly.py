"""`nexusd plan --stdout` prints a response and writes nothing: no response, checkpoint,
check notes, lesson, prompt log, telemetry or check history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from nexusd.models.prompts import prompts_dir
from nexusd.models.telemetry import telemetry_file
from nexusd.paths import find_repo
from tests.conftest import git

ANSWER = {
    "analysis": "The check fails because add() subtracts.",
    "actions": [
        {
            "title": "Fix add",
            "details": "Return a + b.",
            "target_files": ["calc.py"],
            "verify": "python3 check.py",
        }
    ],
    "blocker_solutions": [],
    "best_practices": ["Run the check after each change."],
    "tool_calls": [],
    "checklist": ["The check passes."],
}
CHECK = "import sys\nsys.exit(1 if open('calc.py').read().count('-') else 0)\n"


def _config(model: Path) -> str:
    return (
        "sandbox: {backend: subprocess}\n"
        "checkpoint: {on_request: true}\n"
        "memory: {enabled: false}\n"
        "code: {enabled: false}\n"
        "planner: {provider: agent}\n"
        f"providers:\n  agent: {{type: command, command: [{sys.executable}, {model}]}}\n"
        "checks:\n  - {name: unit, run: python3 check.py, when: [request], timeout: 30}\n"
    )


def test_plan_stdout_writes_nothing_anywhere(repo: Path, tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    model.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(json.dumps(ANSWER))})\n")
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(_config(model), encoding="utf-8")
    (repo / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    (repo / "check.py").write_text(CHECK, encoding="utf-8")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    request = folder / "2026-01-01T10_00_00_plan_request.md"
    request.write_text("Fix add() in calc.py\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc with a failing check")
    layout = find_repo(repo)
    refs_before = git(repo, "for-each-ref")
    for i in range(3):  # three attempts: a recurring failure would make a lesson
        (repo / "calc.py").write_text(f"def add(a, b):\n    return a - b - {i}\n")
        proc = subprocess.run(
            [sys.executable, "-P", "-m", "nexusd", "plan", "--stdout", str(request)],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        assert proc.returncode == 0, proc.stderr
        assert "planner: agent" in proc.stdout and "| unit | failed |" in proc.stdout
    assert git(repo, "for-each-ref") == refs_before  # no checkpoint, no notes
    assert git(repo, "status", "--porcelain") == " M calc.py\n"
    assert (repo / "MEMORY.md").read_text() == "# Memory\n"
    assert not prompts_dir(layout).exists()
    assert not telemetry_file(layout).exists()
    assert not (layout.state_dir / "check_history.json").exists()
    assert [p.name for p in folder.iterdir()] == [request.name]
