from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexusd.planner.architect import OFFLINE_NOTE
from nexusd.planner.requested import requested_sections, writer_for
from nexusd.planner.sequence import plan_actions
from nexusd.protocol.documents import Questions
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
    bundle = bundle_for(repo, req)
    sections = requested_sections(bundle, OPPIE_HEADINGS, 8)
    assert tuple(s.title for s in sections) == OPPIE_HEADINGS
    body = {s.title: s.body for s in sections}
    assert body["Key Challenges and Analysis"].startswith(OFFLINE_NOTE)
    # Practices have no heading of their own here, so they join the analysis.
    practice = bundle.practices[0].practice
    assert practice.title in body["Key Challenges and Analysis"]
    assert body["Verifiable Success Criteria"].count("- [ ]") >= 3
    # The breakdown is the plan's actions, in order: create the missing files, the failing
    # test, find the cause the matched practice names (there are no blockers), the checks last.
    actions = plan_actions(bundle, 8)
    steps = _numbered(body["High-level Task Breakdown"])
    assert steps == [f"{a.title}." for a in actions]
    assert [a.step for a in actions][:4] == ["review", "create", "test", "diagnose"]
    assert actions[-1].step == "checks"
    assert set(actions[1].files) == {"src/billing/invoice.py", "tests/test_invoice.py"}
    assert f"(the practice “{practice.title}”)" in actions[3].how
    assert "round per line vs round the sum" in body["High-level Task Breakdown"]
    # Next steps start with the first actions, then the end-of-cycle checklist.
    next_steps = body["Next Steps and Action Items"]
    assert all(f"{a.title}." in next_steps for a in actions[:3])
    assert "history_path" in next_steps or "request" in next_steps


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
