"""Form 3: free-form markdown; the text is the goal, related files and sections honoured."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.protocol.parse import parse_request

FIXTURE = "oppie/2025-04-20T08_11_37_plan_request.md"


def test_oppie_planner_prompt(shared_dir: Path) -> None:
    path = shared_dir / "fixtures" / FIXTURE
    req = parse_request(path.read_bytes(), str(path))
    assert req.form == "freeform"
    assert req.goal == (
        "Invoice totals are off by one cent for customers with more than 40 line items."
        " Find out whether per-line rounding is the cause and plan a fix that keeps"
        " existing invoices reproducible."
    )
    assert req.artifacts == ("src/billing/invoice.py", "tests/test_invoice.py")
    assert req.artifact_notes == (
        (
            "src/billing/invoice.py",
            "builds invoices from usage records; rounding happens per line item",
        ),
        ("tests/test_invoice.py", "unit tests for invoice totals"),
    )
    assert req.requested_sections == (
        "Key Challenges and Analysis",
        "Verifiable Success Criteria",
        "High-level Task Breakdown",
        "Next Steps and Action Items",
    )
    assert req.cycle is None
    assert req.blockers == ()
    assert req.warnings == ()


def test_plain_text_is_the_goal() -> None:
    req = parse_request("Make the login test stop flaking.\n\nIt fails 1 run in 10.\n", "f")
    assert req.form == "freeform"
    assert req.goal == "Make the login test stop flaking.\n\nIt fails 1 run in 10."


def test_markdown_headings_stay_in_the_goal() -> None:
    text = "# Speed up CI\n\nThe suite takes 20 minutes.\n\n## Ideas\n- cache wheels\n"
    req = parse_request(text, "f")
    assert req.goal == text.strip()


def test_role_preamble_is_dropped() -> None:
    text = (
        "You are a helpful assistant working as a planner.\n\n"
        "Related files:\n======\n- app.py\n- `lib/db.py`\n======\n\n"
        "Cut the cold start time of app.py in half.\n"
    )
    req = parse_request(text, "f")
    assert req.goal == "Cut the cold start time of app.py in half."
    assert req.artifacts == ("app.py", "lib/db.py")
    assert req.artifact_notes == ()


def test_only_a_role_preamble_is_still_a_goal() -> None:
    text = "You are a planner agent. Plan the migration to Postgres 16.\n"
    assert parse_request(text, "f").goal == text.strip()


@pytest.mark.parametrize(
    "label",
    ["Goal:", "**Goal:**", "Task:", "User query:", "Interpretation of User Query to planner:"],
)
def test_goal_labels(label: str) -> None:
    text = (
        f"Some context that is not the goal.\n\n{label}\nRemove the dead code.\n\nNotes:\nlater\n"
    )
    assert parse_request(text, "f").goal == "Remove the dead code."


def test_goal_on_the_label_line_and_following_paragraphs() -> None:
    text = "Goal: Remove the dead code.\n\nStart with utils.py.\n\n## Other\nno\n"
    assert parse_request(text, "f").goal == "Remove the dead code.\n\nStart with utils.py."


def test_setext_heading_is_not_a_related_files_block() -> None:
    text = "Title\n======\n\nPlan the release.\n\n======\n"
    req = parse_request(text, "f")
    assert req.artifacts == ()
    assert "Plan the release." in req.goal


def test_requested_sections_in_a_bullet_list() -> None:
    text = "Plan the release.\n\nAnswer with:\n- `## Risks`\n- ## Rollout:\n* `### Rollback`\n"
    req = parse_request(text, "f")
    assert req.requested_sections == ("Risks", "Rollout", "Rollback")
    assert req.goal == "Plan the release."
