"""Lessons come only from the daemon's cycles (never manual runs), as well-formed markdown."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from click.testing import CliRunner
from markdown_it import MarkdownIt

from nexusd.cli import cli
from nexusd.config import load_config
from nexusd.paths import find_repo
from nexusd.planner.grounding import Services
from nexusd.planner.pipeline import answer_request
from tests.conftest import git

CONFIG = """\
sandbox:
  backend: subprocess
checkpoint:
  on_request: true
code:
  enabled: false
checks:
  - name: unit
    run: python3 check.py
    when: [request, manual]
    timeout: 30
"""
CHECK = """import sys
print('Traceback (most recent call last):')
print('  File "calc.py", line 2, in add')
print('AssertionError: add is wrong')
sys.exit(1 if open('calc.py').read().count('-') else 0)
"""


def _setup(repo: Path) -> Path:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    template = resources.files("nexusd.templates").joinpath("MEMORY.md")
    (repo / "MEMORY.md").write_text(template.read_text(encoding="utf-8"), encoding="utf-8")
    (repo / "check.py").write_text(CHECK, encoding="utf-8")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc with a failing check")
    return repo


def _attempts(repo: Path, services: Services, n: int = 3, expect: str = "ok") -> None:
    """`n` cycles, each after a (wrong) change of the user's code."""
    layout = find_repo(repo)
    config = load_config(repo)
    folder = repo / ".scratchpad_logs"
    folder.mkdir(exist_ok=True)
    for i in range(n):
        (repo / "calc.py").write_text(f"def add(a, b):\n    return a - b - {i}\n")
        request = folder / f"2026-01-01T10_00_0{i}_plan_request.md"
        request.write_text(f"Fix add() in calc.py, attempt {i}\n", encoding="utf-8")
        outcome = answer_request(request, layout, config, services=services)
        assert outcome.status == expect, outcome.message


def test_manual_runs_never_write_lessons(repo: Path) -> None:
    _setup(repo)
    before = (repo / "MEMORY.md").read_text(encoding="utf-8")
    for i in range(3):
        (repo / "calc.py").write_text(f"def add(a, b):\n    return a - b - {i}\n")
        result = CliRunner().invoke(cli, ["check", "-C", str(repo)])
        assert result.exit_code == 1, result.output
    _attempts(repo, Services())  # `nexusd plan` in the foreground: Services() by default
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == before


def test_daemon_cycles_write_one_well_formed_lesson_and_solution(repo: Path) -> None:
    _setup(repo)
    template = (repo / "MEMORY.md").read_text(encoding="utf-8")
    _attempts(repo, Services(learn=True))
    # The fix: the check passes; nexusd's own files changed too (responses, checkpoints).
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    request = repo / ".scratchpad_logs" / "2026-01-01T11_00_00_plan_request.md"
    request.write_text("Fix add() in calc.py, for real\n", encoding="utf-8")
    answer_request(request, find_repo(repo), load_config(repo), services=Services(learn=True))

    text = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert text.count("**Lesson:**") == 1 and text.count("**Solution:**") == 1
    # Each entry is a list item under its category; the only new heading is that category.
    assert [h for h in _headings(text) if h not in _headings(template)] == ["Solutions"]
    tokens = MarkdownIt("commonmark").parse(text)
    # The solution's diffstat is a code block inside the list item, naming only user files.
    blocks = [t for t in tokens if t.type in ("code_block", "fence")]
    assert len(blocks) == 1 and blocks[0].level > 0 and "calc.py" in blocks[0].content
    for own in (".scratchpad_logs", "MEMORY.md", "memory/daily"):
        assert own not in blocks[0].content


def _headings(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_answering_the_same_request_again_is_not_a_new_failure(repo: Path) -> None:
    _setup(repo)
    before = (repo / "MEMORY.md").read_text(encoding="utf-8")
    layout, config = find_repo(repo), load_config(repo)
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    request = folder / "2026-01-01T10_00_00_plan_request.md"
    request.write_text("Fix add() in calc.py\n", encoding="utf-8")
    for i in range(3):  # the user's files change, but it is one cycle answered three times
        (repo / "calc.py").write_text(f"def add(a, b):\n    return a - b - {i}\n")
        outcome = answer_request(request, layout, config, force=True, services=Services(learn=True))
        assert outcome.status == "ok", outcome.message
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == before
    # Three answered cycles (three requests) with the same failure do make the lesson.
    _attempts(repo, Services(learn=True))
    assert (repo / "MEMORY.md").read_text(encoding="utf-8").count("**Lesson:**") == 1


def test_a_cycle_that_was_not_answered_teaches_nothing(repo: Path) -> None:
    # The checks run, then the plan fails on nexusd's side (a catalog that is missing):
    # the response is a setup error, so the cycle was not answered and nothing is learned.
    _setup(repo)
    config_file = repo / ".nexus" / "config.yaml"
    config_file.write_text(CONFIG + "planner:\n  catalog: missing.yaml\n", encoding="utf-8")
    before = (repo / "MEMORY.md").read_text(encoding="utf-8")
    _attempts(repo, Services(learn=True), expect="error")
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == before
    assert not (find_repo(repo).state_dir / "check_history.json").exists()
