"""A model's answer as markdown: its file names and commands stay one code span each."""

from __future__ import annotations

from markdown_it import MarkdownIt

from nexusd.planner.llm_render import render_field


def _spans(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return [
        child.content
        for token in tokens
        for child in token.children or []
        if child.type == "code_inline"
    ]


def test_a_backtick_in_a_named_file_keeps_its_code_span_whole() -> None:
    action = {
        "title": "Fix it",
        "details": "",
        "target_files": ["src/we`ird.py", "`src/app.py`"],  # a model often adds backticks
        "verify": "tests pass",
    }
    assert _spans(render_field("actions", [action])) == ["src/we`ird.py", "src/app.py"]


def test_a_tool_calls_command_is_one_code_span() -> None:
    calls = [
        {"tool": "`pytest`", "args": "-k 'we`ird'", "purpose": "run one test"},
        {"tool": "git", "args": "log -n 3", "purpose": "recent work"},
    ]
    assert _spans(render_field("tool_calls", calls)) == ["pytest -k 'we`ird'", "git log -n 3"]


def test_a_commands_own_closing_backtick_is_kept() -> None:
    # Only the backticks a model put around the whole command are taken off.
    calls = [
        {"tool": "sh", "args": "-c 'echo started' && echo `date`", "purpose": "when"},
        {"tool": "`kill `cat daemon.pid``", "args": "", "purpose": "stop it"},
    ]
    assert _spans(render_field("tool_calls", calls)) == [
        "sh -c 'echo started' && echo `date`",
        "kill `cat daemon.pid`",
    ]
