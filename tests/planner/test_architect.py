from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from nexusd.config import config_from_mapping
from nexusd.context.relevant_code import code_phase
from nexusd.paths import find_repo
from nexusd.planner.actions import checks_action, locate_action, review_action
from nexusd.planner.architect import OFFLINE_NOTE, standard_sections, title_for
from nexusd.protocol.documents import STANDARD_SECTIONS
from tests.code.conftest import CORE, UTIL, write
from tests.conftest import git
from tests.plan_helpers import bundle_for, kitchen_repo, request


def _numbered(body: str) -> list[str]:
    return re.findall(r"^\d+\. \*\*(.*?)\*\*", body, flags=re.M)


def test_six_standard_sections(repo: Path) -> None:
    kitchen_repo(repo)
    bundle = bundle_for(repo, request())
    sections = standard_sections(bundle, 8)
    assert tuple(s.title for s in sections) == STANDARD_SECTIONS
    body = {s.title: s.body for s in sections}
    analysis = body["Analysis and Justification"]
    assert OFFLINE_NOTE in analysis
    assert "branch `main`" in analysis
    assert "| `kitchen/shelves.py` | ok |" in analysis
    assert "Shelf, OverflowShelf, place_order, drain" in analysis
    # The executor's analysis question is quoted and answered from the matched practice.
    assert bundle.request.questions.analysis in analysis
    match = bundle.practices[0]
    assert "lock" in match.matched
    assert match.practice.title in analysis and match.practice.title in body["Best Practices"]
    plan = _numbered(body["Plan"])
    assert 2 <= len(plan) <= 8
    assert plan[0] == f"{review_action(bundle).title}."
    assert plan[-1] == f"{checks_action(bundle).title}."
    assert "`run_pytest`" in body["Recommended Tool Calls"]  # from the request's tools file
    # The checklist points the next request at this cycle's history.
    checklist = body["Executor Follow-up Checklist"]
    assert "cycle 4" in checklist
    assert "history_path: .scratchpad_logs/2025-05-08T14_02_11" in checklist


def test_each_blocker_has_evidence_and_a_diagnostic(repo: Path) -> None:
    kitchen_repo(repo)
    blockers = (
        "Order lost on the overflow shelf under contention",
        "pytest-timeout kills the stress test on CI after 60 s",
        "The frobnicator quux is xyzzy",  # matches nothing: still gets a next step
    )
    bundle = bundle_for(repo, request(blockers=blockers))
    body = {s.title: s.body for s in standard_sections(bundle, 8)}["Blocker Solutions"]
    parts = re.split(r"^### ", body, flags=re.M)[1:]
    assert len(parts) == 3
    for part, blocker in zip(parts, blockers, strict=True):
        assert part.startswith(f"{blockers.index(blocker) + 1}. {blocker}")
        assert "- Evidence" in part
        assert "- Next diagnostic step: " in part
    assert "`kitchen/shelves.py:" in parts[0]
    assert "`tests/test_concurrency.py:" in parts[1]
    assert ".py:" not in parts[2]  # nothing mentions it: no evidence to cite
    assert "git bisect" in parts[2]  # but a next step all the same


def test_a_blockers_diagnostic_names_the_repositorys_commands(repo: Path) -> None:
    # The catalog's `{first_failure}` is the toolchain's command in the plan's step and in
    # the blocker's next step too, not only in the analysis: the loop is copied as it is.
    kitchen_repo(repo)
    bundle = bundle_for(repo, request(blockers=("Order lost on the shelf under contention",)))
    sections = {s.title: s.body for s in standard_sections(bundle, 8)}
    first_failure = bundle.toolchain.first_failure
    for title in ("Plan", "Blocker Solutions"):
        assert "seq 50" in sections[title]
        assert "{first_failure}" not in sections[title]
        assert f"do {first_failure} || break" in sections[title]


def test_no_blockers_says_so(repo: Path) -> None:
    bundle = bundle_for(repo, request(blockers=(), artifacts=()))
    body = {s.title: s.body for s in standard_sections(bundle, 8)}
    assert (
        "### " not in body["Blocker Solutions"]
        and "no blockers" in body["Blocker Solutions"].lower()
    )
    # Without artifacts the plan starts by locating the code.
    assert f"{locate_action(bundle).title}." in _numbered(body["Plan"])
    assert "git log --oneline -n 5" in body["Recommended Tool Calls"]


def test_missing_tools_file_gives_generic_tools(repo: Path) -> None:
    bundle = bundle_for(repo, request(tools_file=".cursor/none.md", artifacts=("README.md",)))
    tools = {s.title: s.body for s in standard_sections(bundle, 8)}["Recommended Tool Calls"]
    assert "`.cursor/none.md`" in tools  # the missing file is named, generic tools follow
    for generic in ("git log --oneline -n 5 -- README.md", "nexusd checkpoint create", "pytest"):
        assert generic in tools


@pytest.mark.parametrize("indexed", [True, False])
def test_the_search_tool_is_the_impact_of_the_first_ranked_unit(repo: Path, indexed: bool) -> None:
    for rel, text in {"pkg/core.py": CORE, "pkg/util.py": UTIL}.items():
        write(repo, rel, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    req = request(goal="parse_expr raises ValueError on empty input", blockers=(), artifacts=())
    bundle = bundle_for(repo, req)
    if indexed:
        found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
        bundle = dataclasses.replace(bundle, code_hits=found.hits)
    tools = {s.title: s.body for s in standard_sections(bundle, 8)}["Recommended Tool Calls"]
    impact = "`nexusd code impact pkg/core.py:Parser.parse_expr`: who calls `parse_expr`"
    assert (impact in tools) is indexed
    assert ("`git grep -n -i" in tools) is not indexed


def test_the_search_tool_skips_test_blocks_in_a_spec_no_test_path_names(repo: Path) -> None:
    # Cypress specs live under `cypress/e2e/`: not a test path, yet their units are test blocks,
    # which nobody calls.
    spec = (
        "describe('#parseExpr', () => {\n"
        "  it('parse_expr raises ValueError on empty input', () => {\n"
        "    cy.visit('/parse_expr?empty=input&raises=ValueError')\n"
        "  })\n"
        "})\n"
    )
    for rel, text in {"pkg/core.py": CORE, "cypress/e2e/parse.cy.js": spec}.items():
        write(repo, rel, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    req = request(goal="parse_expr raises ValueError on empty input", blockers=(), artifacts=())
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    assert any(h.path == "cypress/e2e/parse.cy.js" for h in found.hits)
    bundle = dataclasses.replace(bundle_for(repo, req), code_hits=found.hits)
    tools = {s.title: s.body for s in standard_sections(bundle, 8)}["Recommended Tool Calls"]
    assert "`nexusd code impact pkg/core.py:Parser.parse_expr`" in tools
    assert 'it("' not in tools


def test_output_is_deterministic(repo: Path) -> None:
    kitchen_repo(repo)
    first = standard_sections(bundle_for(repo, request()), 8)
    second = standard_sections(bundle_for(repo, request()), 8)
    assert first == second


@pytest.mark.parametrize(
    ("cycle", "title"),
    [(3, "Plan for cycle 3: Find and fix"), (None, "Plan: Find and fix")],
)
def test_title(repo: Path, cycle: int | None, title: str) -> None:
    assert title_for(bundle_for(repo, request(cycle=cycle))).startswith(title)


def test_table_cells_escape_pipes(repo: Path) -> None:
    req = request(artifacts=("README.md",), artifact_notes=(("README.md", "intro | overview"),))
    analysis = standard_sections(bundle_for(repo, req), 8)[0].body
    row = next(line for line in analysis.splitlines() if line.startswith("| `README.md`"))
    assert "intro \\| overview" in row
    assert row.count(" | ") == 5


def test_a_refused_artifact_says_refused_once(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("x = 1\n")
    analysis = standard_sections(bundle_for(repo, request(artifacts=("../secret.py",))), 8)[0]
    row = next(line for line in analysis.body.splitlines() if line.startswith("| `../secret.py`"))
    assert "| refused: resolves outside" in row and row.count("refused") == 1


def _text_outside_code(markdown: str) -> str:
    """What a CommonMark reader shows as text, not code: a broken code span leaves its
    backticks here."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    return "".join(
        child.content for token in tokens for child in token.children or [] if child.type == "text"
    )


def test_names_with_backticks_stay_inline_code_in_every_section(repo: Path) -> None:
    write(repo, "pkg/we`ird.py", CORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    git(repo, "checkout", "-qb", "fix`parser")
    (repo / "pkg" / "we`ird.py").write_text(CORE + "\n# touched\n", encoding="utf-8")
    req = request(
        goal="parse_expr raises ValueError on empty input",
        blockers=("ValueError: empty expression",),
        artifacts=("pkg/we`ird.py", "pkg/new`er.py"),
        tools_file=".cursor/to`ols.md",
    )
    bundle = bundle_for(repo, req)
    found = code_phase(find_repo(repo), config_from_mapping({}), req, None)
    bundle = dataclasses.replace(bundle, code_hits=found.hits)
    body = "\n\n".join(s.body for s in standard_sections(bundle, 12))
    assert "``pkg/we`ird.py``" in body and "``pkg/new`er.py``" in body
    assert "branch ``fix`parser``" in body
    # Quoted for the shell too: a backtick there would run a command.
    assert "``nexusd code impact 'pkg/we`ird.py:Parser.parse_expr'``" in body
    assert "`" not in _text_outside_code(body)
