"""Regenerate the repository's own `.scratchpad_logs/` example with the real pipeline.

Writes the example plan request for nexusd itself (kept if it already exists, so an edited
request is answered as edited) and answers it again with `answer_request(force=True)`.
tests/planner/test_example.py fails when the committed response no longer matches the
committed request, so run this after changing either:

    python scripts/regen_example.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's nexusd, installed or not

from nexusd.config import load_config  # noqa: E402
from nexusd.paths import find_repo  # noqa: E402
from nexusd.planner.pipeline import answer_request  # noqa: E402
from nexusd.protocol.documents import Questions  # noqa: E402
from nexusd.protocol.request_form import render_request  # noqa: E402

EXAMPLE_REQUEST = ROOT / ".scratchpad_logs" / "2025-06-02T09_30_00_plan_request.md"


def example_text() -> str:
    """The example request: a real cycle of work on nexusd's own offline planner."""
    return render_request(
        cycle=2,
        project="nexusd",
        previous_goal="Answer Template A requests with the offline planner through one pipeline",
        previous_outcome=(
            "answer_request writes grounded responses; the daemon calls it for every request"
        ),
        blockers=[
            "The first request after a daemon start is slower: the best-practice catalog is "
            "loaded and its keyword patterns compiled on first use",
        ],
        goal=(
            "Keep the offline planner within the p50 latency goal of 100 ms while every plan "
            "stays grounded in git facts and the relevant artifacts"
        ),
        history_path=None,
        time_box="2 hours",
        artifacts=[
            "nexusd/planner/pipeline.py",
            "nexusd/context/librarian.py",
            "nexusd/context/gitfacts.py",
            "nexusd/context/catalog.py",
            "tests/planner/test_pipeline.py",
        ],
        questions=Questions(
            analysis="Which phase dominates the time to answer: the git subprocesses or Python?",
        ),
    )


def main() -> int:
    """Write (or keep) the example request, answer it, print both paths."""
    layout = find_repo(ROOT)
    if not EXAMPLE_REQUEST.exists():
        EXAMPLE_REQUEST.parent.mkdir(parents=True, exist_ok=True)
        EXAMPLE_REQUEST.write_text(example_text(), encoding="utf-8")
        print(f"wrote    {EXAMPLE_REQUEST.relative_to(ROOT)}")
    else:
        print(f"kept     {EXAMPLE_REQUEST.relative_to(ROOT)}")
    outcome = answer_request(EXAMPLE_REQUEST, layout, load_config(layout.root), force=True)
    response = outcome.response_path.relative_to(ROOT)
    print(f"{outcome.status:<8} {response} (revision {outcome.revision})")
    if outcome.status != "ok":
        print(f"error: {outcome.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
