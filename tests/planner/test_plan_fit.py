"""Whole answers as a newcomer gets them: the right previous cycle, a clean title, a bounded
echo of the goal, and no stop words or word fragments as evidence."""

from __future__ import annotations

from pathlib import Path

from nexusd.config import config_from_mapping
from nexusd.context.artifacts import find_mentions, inspect_artifact
from nexusd.context.keywords import keywords
from nexusd.paths import find_repo
from nexusd.planner.pipeline import answer_request
from nexusd.protocol.render import parse_response, read_response_meta
from tests.conftest import git

FEATURE = """# Add a file-size option type

Add a `FileSize` parameter type so `--max-size 10MB` is parsed into bytes.

```python
@click.option("--max-size", type=FileSize())
def cli(max_size):
    print("SECRET_MARKER_IN_CODE")
```
"""


def _answer(repo: Path, name: str, text: str) -> str:
    folder = repo / ".scratchpad_logs"
    folder.mkdir(exist_ok=True)
    request = folder / f"{name}_plan_request.md"
    request.write_text(text, encoding="utf-8")
    cfg = config_from_mapping({"code": {"enabled": False}, "checkpoint": {"on_request": False}})
    outcome = answer_request(request, find_repo(repo), cfg)
    return outcome.response_path.read_text(encoding="utf-8")


def _first_action(text: str) -> str:
    response = parse_response(text)
    assert response is not None
    plan = next(s.body for s in response.sections if s.title == "Plan")
    return plan.split("\n   - How:", 1)[0]


def test_a_new_goal_does_not_continue_an_error_or_an_unrelated_response(repo: Path) -> None:
    _answer(repo, "2025-05-01T10_00_00", "Fix the crash in prompt() when the input is empty")
    error = _answer(repo, "2025-05-01T11_00_00", "---\ncycle: 2\n---\n# Plan Request\n")
    assert read_response_meta(error)["status"] == "error"  # type: ignore[index]
    text = _answer(repo, "2025-05-01T12_00_00", FEATURE)
    assert "2025-05-01T11_00_00_plan_response.md" not in text
    assert "2025-05-01T10_00_00_plan_response.md" not in text
    assert "Review the starting point" in _first_action(text)
    # A request about the same subject continues the related response, skipping the error.
    again = _answer(repo, "2025-05-01T13_00_00", "Make prompt() survive empty input: no crash")
    assert "2025-05-01T10_00_00_plan_response.md" in _first_action(again)


def test_the_title_and_analysis_name_the_goal_without_echoing_the_paste(repo: Path) -> None:
    text = _answer(repo, "2025-05-01T12_00_00", FEATURE)
    assert "\n# Plan: Add a file-size option type\n" in text
    assert "# Plan: #" not in text
    # The code block stays in the request: no line of it is repeated in the response.
    assert "SECRET_MARKER_IN_CODE" not in text
    assert "@click.option" not in text
    assert "parsed into bytes" in text  # the prose is summarised, not dropped


def test_a_huge_goal_gives_a_bounded_response(repo: Path) -> None:
    line = "prompt default value input empty crash parser option command context echo\n"
    goal = "# Make prompt handle empty input\n\n" + line * (900_000 // len(line))
    text = _answer(repo, "2025-05-02T10_00_00", goal)
    assert read_response_meta(text)["status"] == "ok"  # type: ignore[index]
    # 900 KB in, a plan out: the goal is summarised (a few hundred characters), not echoed.
    assert len(text.encode()) < 40_000
    assert "more characters in the request" in text


def test_stop_words_and_word_fragments_are_not_evidence(repo: Path) -> None:
    (repo / "prompt.py").write_text(
        "def prompt(text, default=None):\n    if default is None:\n        return text\n"
        "    # reject a non-empty default that is blank\n    return default\n",
        encoding="utf-8",
    )
    git(repo, "add", "prompt.py")
    git(repo, "commit", "-q", "-m", "prompt")
    words = keywords("Reject a non-empty default value in prompt()")
    assert "non" not in words
    art = inspect_artifact(repo, "prompt.py")
    lines = {h.line for h in find_mentions((art,), ("non",))}
    assert lines == {4}  # the word in `non-empty`; `None` on lines 1 and 2 is not `non`
    assert {h.line for h in find_mentions((art,), ("defau",))} == {1, 2, 4, 5}
