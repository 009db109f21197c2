"""The librarian's code phase on a real repository: findings, the section, the prompt items."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from nexusd.config import Config, config_from_mapping
from nexusd.context.relevant_code import (
    code_phase,
    code_snippets,
    query_text,
    relevant_code_section,
)
from nexusd.paths import find_repo
from nexusd.planner.model_plan import context_items
from nexusd.sandbox.request_checks import CriticReport
from tests.code.conftest import CORE, TEST, UTIL, write
from tests.conftest import git
from tests.models.loopback import Loopback, Reply, chat_payload
from tests.plan_helpers import bundle_for, request


def _repo(root: Path) -> Path:
    _committed(root, {"pkg/core.py": CORE, "pkg/util.py": UTIL})
    return root


def _committed(root: Path, files: dict[str, str]) -> None:
    """Write `files` (path → text) into the repository and commit them."""
    for path, text in files.items():
        write(root, path, text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code")


def test_query_text_reads_goal_blockers_and_outcome() -> None:
    req = request(
        goal="Fix parse_expr\nmore", blockers=("ValueError: empty",), previous_outcome="x"
    )
    text, title = query_text(req)
    assert title == "Fix parse_expr"
    assert "ValueError: empty" in text and text.startswith("Fix parse_expr")


@pytest.mark.parametrize(
    "goal",
    [
        "<!-- Please describe the bug and search existing issues first.\n"
        "     Issues without a reproduction may be closed. -->\nFix parse_expr\nmore",
        "### Describe the bug\n\nFix parse_expr\n\n### Steps to reproduce\nrun it",
        "**Describe the bug**\nFix parse_expr\n",
        "# Fix parse_expr\n\nmore",
        "## Fix parse_expr\n\nmore",
    ],
    ids=["template-comment", "form-heading", "bold-label", "title-heading", "level-2-title"],
)
def test_the_title_is_the_goals_first_line_past_a_templates_markup(goal: str) -> None:
    assert query_text(request(goal=goal, blockers=()))[1] == "Fix parse_expr"


def test_a_goal_that_starts_at_a_prompt_has_no_title() -> None:
    assert query_text(request(goal=">>> parse_expr('')\nValueError", blockers=()))[1] == ""


@pytest.mark.parametrize("goal", ["Fix the bug below", "Please investigate this issue."])
def test_a_goal_that_only_asks_takes_its_title_from_the_first_blocker(goal: str) -> None:
    blockers = ("Thanks in advance", "parse_expr raises ValueError on empty input", "more")
    assert query_text(request(goal=goal, blockers=blockers))[1] == blockers[1]


def test_code_phase_names_the_best_tests_beside_the_files(repo: Path) -> None:
    _committed(repo, {"pkg/core.py": CORE, "pkg/util.py": UTIL, "tests/test_core.py": TEST})
    req = request(goal="parse_expr raises ValueError on empty input", blockers=())
    cfg = config_from_mapping({"code": {"max_results": 1}})
    found = code_phase(find_repo(repo), cfg, req, None)
    assert [hit.path for hit in found.hits] == ["pkg/core.py"]
    assert [hit.path for hit in found.tests] == ["tests/test_core.py"]


def test_code_phase_finds_the_file_and_the_section_cites_it(repo: Path) -> None:
    _repo(repo)
    req = request(goal="parse_expr raises ValueError on empty input", blockers=())
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    assert found.note is None
    assert found.hits[0].path == "pkg/core.py"  # type: ignore[attr-defined]
    section = relevant_code_section(found.hits)
    assert section is not None and section.title == "Relevant Code"
    first = section.body.split("\n")[1]
    assert first.startswith("1. `pkg/core.py:9` — defines `Parser.parse_expr`")
    assert "   - `pkg/core.py:9` method `Parser.parse_expr`" in section.body


def _text_outside_code(markdown: str) -> str:
    """What a CommonMark reader shows as text, not code: a broken code span leaves its
    backticks here."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    return "".join(
        child.content for token in tokens for child in token.children or [] if child.type == "text"
    )


def test_a_backtick_in_a_file_name_keeps_the_section_s_code_spans_whole(repo: Path) -> None:
    # Alone: the reasons nexusd/code writes (`imported by …`) are its own to render.
    _committed(repo, {"pkg/we`ird.py": CORE})
    req = request(goal="parse_expr raises ValueError on empty input", blockers=())
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    assert found.hits[0].path == "pkg/we`ird.py"
    section = relevant_code_section(found.hits)
    assert section is not None
    assert "1. ``pkg/we`ird.py:9`` — defines `Parser.parse_expr`" in section.body
    assert "   - ``pkg/we`ird.py:9`` method `Parser.parse_expr`" in section.body
    assert "`" not in _text_outside_code(section.body)


def test_code_phase_is_off_when_disabled(repo: Path) -> None:
    _repo(repo)
    cfg = config_from_mapping({"code": {"enabled": False}})
    assert code_phase(find_repo(repo), cfg, request(goal="parse_expr"), None).hits == ()


@pytest.mark.parametrize("wait_s", [30.0, 0.05])
def test_a_plan_waits_briefly_for_the_daemons_first_build(
    repo: Path, monkeypatch: pytest.MonkeyPatch, wait_s: float
) -> None:
    from nexusd.code.service import CodeIndex
    from nexusd.context import relevant_code

    _repo(repo)
    monkeypatch.setattr(relevant_code, "FIRST_BUILD_WAIT_S", wait_s)
    config = config_from_mapping({"code": {"workers": 1}})
    index = CodeIndex(find_repo(repo), config)
    index.open()  # the daemon right after it started: opened, its first update to come
    req = request(goal="parse_expr raises ValueError on empty input", blockers=())
    found: list[object] = []
    planner = threading.Thread(
        target=lambda: found.append(code_phase(find_repo(repo), config, req, index))
    )
    build = threading.Thread(target=index.update)
    with index._lock:  # the first update is about to begin
        build.start()
        planner.start()
        planner.join(0.5 if wait_s > 1 else 30)
        assert planner.is_alive() == (wait_s > 1)  # a long wait is still waiting
    build.join(30)
    planner.join(30)
    (findings,) = found
    if wait_s > 1:  # it waited for the build: the code section is there
        assert findings.hits[0].path == "pkg/core.py" and findings.note is None  # type: ignore[attr-defined]
    else:  # it went on without: no code, and the response says why
        assert findings.hits == ()  # type: ignore[attr-defined]
        assert "not been brought up to date yet" in findings.note  # type: ignore[attr-defined]


def test_a_model_prompt_gets_the_top_unit_as_a_cited_snippet(repo: Path) -> None:
    _repo(repo)
    req = request(goal="parse_expr raises ValueError on empty input", blockers=())
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    snippets = code_snippets(repo, found.hits)
    label, text = snippets[0]
    assert label == "Code pkg/core.py:9 Parser.parse_expr"
    assert text.startswith("pkg/core.py:9-13 (defines `Parser.parse_expr`")
    assert 'raise ValueError("empty expression")' in text
    full = dataclasses.replace(bundle_for(repo, req), code_hits=found.hits)
    items = context_items(full, (), CriticReport())
    assert next(i.title for i in items if i.kind == "code") == label


def test_a_snippet_is_never_read_through_a_symlink(repo: Path, tmp_path: Path) -> None:
    _repo(repo)
    req = request(goal="parse_expr raises ValueError on empty input", blockers=())
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    outside = tmp_path / "secret.py"
    outside.write_text("SECRET = 1\n" * 20)
    (repo / "pkg/core.py").unlink()
    (repo / "pkg/core.py").symlink_to(outside)
    assert all("SECRET" not in text for _, text in code_snippets(repo, found.hits))


def _librarian(url: str) -> dict[str, object]:
    return {
        "routing": {"librarian": {"provider": "small"}},
        "providers": {
            "small": {"type": "openai", "base_url": f"{url}/v1", "model": "m", "timeout_ms": 3000}
        },
    }


def test_a_configured_librarian_model_reorders_the_files(repo: Path) -> None:
    _repo(repo)
    req = request(goal="parse_expr raises ValueError on empty input; helper", blockers=())
    offline = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    assert [h.path for h in offline.hits][:2] == ["pkg/core.py", "pkg/util.py"]
    answer = json.dumps({"files": ["pkg/util.py", "not/a/candidate.py"]})
    with Loopback([Reply(body=chat_payload(answer))]) as server:
        cfg = config_from_mapping(_librarian(server.url))
        found = code_phase(find_repo(repo), cfg, req, None)
    assert [h.path for h in found.hits][:2] == ["pkg/util.py", "pkg/core.py"]
    assert found.hits[0].reasons[0] == "the librarian model ranks it #1"
    prompt = server.requests[0][1]["messages"][1]["content"]
    assert "- pkg/core.py (Parser.parse_expr" in prompt and "parse_expr raises" in prompt


def test_a_failing_librarian_model_keeps_the_index_order(repo: Path) -> None:
    _repo(repo)
    req = request(goal="parse_expr raises ValueError on empty input; helper", blockers=())
    offline = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    with Loopback([Reply(500, "down")]) as server:
        found = code_phase(find_repo(repo), config_from_mapping(_librarian(server.url)), req, None)
    assert server.requests and found.hits == offline.hits


@pytest.mark.bwrap
def test_the_requests_own_code_is_run_and_the_file_it_entered_moves_up(
    bwrap_usable: None, repo: Path
) -> None:
    # No word leads to calc/engine.py: the report names only `total`, which calc/api.py
    # defines (a thin entry point) and calc/notes.py talks about at length.
    _committed(
        repo,
        {
            "calc/__init__.py": "from calc.api import total\n",
            "calc/api.py": "from calc import engine\n\ndef total(xs):\n    return engine.run(xs)\n",
            "calc/engine.py": (
                "def run(xs):\n    acc = 0\n    for x in xs:\n        acc += x\n    return acc\n"
            ),
            "calc/notes.py": (
                '"""total total total: the total of a list, total."""\n\n'
                'def total_words():\n    return "total"\n'
            ),
        },
    )
    text = "total gives the wrong sum\n\n>>> from calc import total\n>>> total([1, 2])\n4\n"
    req = request(goal=text, blockers=())
    off = config_from_mapping({"code": {"reproduce": {"mode": "off"}}})
    before = code_phase(find_repo(repo), off, req, None)
    assert before.reproduction is None
    assert all("ran when" not in r for h in before.hits for r in h.reasons)  # type: ignore[attr-defined]
    found = code_phase(
        find_repo(repo), config_from_mapping({"sandbox": {"backend": "bwrap"}}), req, None
    )
    paths = [h.path for h in found.hits]  # type: ignore[attr-defined]
    assert paths.index("calc/engine.py") < [h.path for h in before.hits].index("calc/engine.py")  # type: ignore[attr-defined]
    engine = next(h for h in found.hits if h.path == "calc/engine.py")  # type: ignore[attr-defined]
    assert "ran when the request's code was run (`run`)" in engine.reasons
    assert found.reproduction is not None and "on bwrap" in found.reproduction
    section = relevant_code_section(found.hits, found.reproduction)
    assert section is not None and section.body.split("\n")[1] == found.reproduction


@pytest.mark.bwrap
def test_the_functions_the_requests_code_ran_lead_their_file(
    bwrap_usable: None, repo: Path
) -> None:
    # `summary` shares more of the report's words than `add_up`, which `total` calls.
    engine_py = (
        "def total(xs):\n    return add_up(xs)\n\n\n"
        'def add_up(xs):\n    """Sum the numbers."""\n    return sum(xs) + 1\n\n\n'
        'def summary(xs):\n    """The wrong sum, in words: a sum of the numbers."""\n'
        '    return "sum: wrong numbers"\n'
    )
    _committed(
        repo, {"calc/__init__.py": "from calc.engine import total\n", "calc/engine.py": engine_py}
    )
    text = "the sum is wrong\n\n>>> from calc import total\n>>> total([1, 2])\n4\n"
    req = request(goal=text, blockers=())

    def engine(config: Config) -> Any:
        found = code_phase(find_repo(repo), config, req, None)
        return found, next(h for h in found.hits if h.path == "calc/engine.py")  # type: ignore[attr-defined]

    _, before = engine(config_from_mapping({"code": {"reproduce": {"mode": "off"}}}))
    assert [u.qualname for u in before.units] == ["summary", "add_up", "total"]
    found, after = engine(config_from_mapping({"sandbox": {"backend": "bwrap"}}))
    ran = [(u.qualname, u.ran) for u in after.units]
    assert ran == [("add_up", True), ("total", True), ("summary", False)]
    section = relevant_code_section(found.hits, found.reproduction)
    assert section is not None
    assert "`calc/engine.py:5` function `add_up` (mentions `sum`; the request's code ran it)" in (
        section.body
    )
    assert "function `summary` (mentions `wrong`, `sum`)" in section.body


@pytest.mark.bwrap
def test_code_using_a_name_the_report_imported_off_screen_still_runs(
    bwrap_usable: None, repo: Path
) -> None:
    # `accumulate` is no name of the package's own namespace: only the code index knows
    # that calc/engine.py defines it.
    _committed(
        repo,
        {"calc/__init__.py": "", "calc/engine.py": "def accumulate(xs):\n    return sum(xs)\n"},
    )
    req = request(goal="accumulate is off by one\n\n>>> accumulate([1, 2])\n4\n", blockers=())
    found = code_phase(
        find_repo(repo), config_from_mapping({"sandbox": {"backend": "bwrap"}}), req, None
    )
    engine = next(h for h in found.hits if h.path == "calc/engine.py")  # type: ignore[attr-defined]
    assert "ran when the request's code was run (`accumulate`)" in engine.reasons
    assert found.reproduction is not None and "entered 1 repository file (" in found.reproduction


@pytest.mark.bwrap
def test_a_recursion_the_requests_code_runs_into_lifts_the_files_it_went_round(
    bwrap_usable: None, repo: Path
) -> None:
    # The report names `total` (calc/api.py) and says nothing of the two modules that call
    # each other for ever; calc/notes.py shares its words.
    _committed(
        repo,
        {
            "calc/__init__.py": "from calc.api import total\n",
            "calc/api.py": "from calc.walker import walk\n\ndef total(xs):\n    return walk(xs)\n",
            "calc/walker.py": (
                "from calc import folder\n\ndef walk(xs):\n    return folder.fold(xs)\n"
            ),
            "calc/folder.py": (
                "from calc import walker\n\n"
                "def fold(xs):\n    return walker.walk(xs) if xs else 0\n"
            ),
            "calc/notes.py": '"""Why a total never returns: the total of a list."""\n',
        },
    )
    text = "total never returns\n\n>>> from calc import total\n>>> total([1])\n"
    req = request(goal=text, blockers=())
    off = code_phase(
        find_repo(repo), config_from_mapping({"code": {"reproduce": {"mode": "off"}}}), req, None
    )
    found = code_phase(
        find_repo(repo), config_from_mapping({"sandbox": {"backend": "bwrap"}}), req, None
    )
    before = [h.path for h in off.hits]  # type: ignore[attr-defined]
    after = [h.path for h in found.hits]  # type: ignore[attr-defined]
    for path, name in (("calc/walker.py", "walk"), ("calc/folder.py", "fold")):
        assert path not in before or after.index(path) < before.index(path)
        hit = next(h for h in found.hits if h.path == path)  # type: ignore[attr-defined]
        said = f"went round in the recursion the request's code ran into (`{name}`)"
        assert hit.reasons[0] == said and hit.units[0].qualname == name
    # api.py's `total` ran once, on the way in: entered, not part of the recursion.
    api = next(h for h in found.hits if h.path == "calc/api.py")  # type: ignore[attr-defined]
    assert not any("recursion" in reason for reason in api.reasons)
    assert found.reproduction is not None and "RecursionError" in found.reproduction
    assert "its recursion went round `fold` in `calc/folder.py`" in found.reproduction


@pytest.mark.bwrap
def test_a_go_or_rust_reports_text_is_never_run_as_python(bwrap_usable: None, repo: Path) -> None:
    _committed(
        repo,
        {
            "go.mod": "module example.com/wheel\n",
            "core/timingwheel.go": "package core\n\nfunc NewTimingWheel() {}\n",
            "core/ticker.go": "package core\n\nfunc NewTicker() {}\n",
        },
    )
    # Inline calls a Python tracer would run, each a NameError in Go's repository.
    text = "`collection.NewTimingWheel()` panics with `timex.NewFakeTicker()` and `-Infinity`"
    found = code_phase(
        find_repo(repo),
        config_from_mapping({"sandbox": {"backend": "bwrap"}}),
        request(goal=text, blockers=()),
        None,
    )
    assert found.reproduction is None
    assert found.hits and found.hits[0].path == "core/timingwheel.go"  # type: ignore[attr-defined]
