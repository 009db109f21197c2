from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexusd.planner.architect import OFFLINE_NOTE
from nexusd.planner.requested import requested_sections, writer_for
from nexusd.protocol.models import Questions
from tests.plan_helpers import bundle_for, request


def _numbered(body: str) -> list[str]:
    return re.findall(r"^\d+\. \*\*(.*?)\*\*", body, flags=re.M)


OPPIE_HEADINGS = (
    "Key Challenges and Analysis",
    "Verifiable Success Criteria",
    "High-level Task Breakdown",
    "Next Steps and Action Items",
)


def test_requested_sections_are_exactly_honoured(repo: Path) -> None:
    req = request(
        form="freeform",
        goal="Invoice totals are off by one cent for customers with more than 40 line items.",
        cycle=None,
        blockers=(),
        artifacts=("src/billing/invoice.py", "tests/test_invoice.py"),
        questions=Questions(),
        requested_sections=OPPIE_HEADINGS,
    )
    sections = requested_sections(bundle_for(repo, req), OPPIE_HEADINGS, 8)
    assert tuple(s.title for s in sections) == OPPIE_HEADINGS
    body = {s.title: s.body for s in sections}
    assert body["Key Challenges and Analysis"].startswith(OFFLINE_NOTE)
    # Practices have no heading of their own here, so they join the analysis.
    assert "Represent money exactly and round once" in body["Key Challenges and Analysis"]
    assert body["Verifiable Success Criteria"].count("- [ ]") >= 3
    assert _numbered(body["High-level Task Breakdown"])[-1] == "Run the checks."
    # No blockers, but the goal matches a practice that says how to find the cause.
    steps = _numbered(body["High-level Task Breakdown"])
    assert (
        steps[1]
        == "Create the missing artifact(s) `src/billing/invoice.py`, `tests/test_invoice.py`."
    )
    assert steps[2] == "Find the cause first (represent money exactly and round once)."
    assert "round per line vs round the sum" in body["High-level Task Breakdown"]
    assert "Start with:" in body["Next Steps and Action Items"]
    assert "next cycle's request" in body["Next Steps and Action Items"]


@pytest.mark.parametrize(
    ("heading", "writer"),
    [
        ("Key Challenges and Analysis", "_analysis"),
        ("Verifiable Success Criteria", "success_criteria"),
        ("High-level Task Breakdown", "_plan"),
        ("Next Steps and Action Items", "next_steps"),
        ("Risks", "_blockers"),
        ("Mental Models", "_practices"),
        ("Commands to run", "_tools"),
        ("Something else entirely", "_analysis"),
    ],
)
def test_writer_for_heading(heading: str, writer: str) -> None:
    assert writer_for(heading).__name__ == writer
