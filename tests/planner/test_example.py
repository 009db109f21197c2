"""The repository's own `.scratchpad_logs/` example never goes stale."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from nexusd.protocol.documents import STANDARD_SECTIONS
from nexusd.protocol.naming import is_request_file, response_path_for
from nexusd.protocol.parse import parse_request
from nexusd.protocol.render import parse_response

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / ".scratchpad_logs").glob("*") if is_request_file(p))


def test_the_repository_ships_an_example() -> None:
    assert EXAMPLES, "run `python scripts/regen_example.py`"


@pytest.mark.parametrize("request_path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_response_answers_the_committed_request(request_path: Path) -> None:
    data = request_path.read_bytes()
    response = parse_response(response_path_for(request_path).read_text(encoding="utf-8"))
    assert response is not None, "run `python scripts/regen_example.py`"
    assert response.meta.request_sha256 == hashlib.sha256(data).hexdigest(), (
        "the example response is stale: run `python scripts/regen_example.py`"
    )
    assert response.meta.status == "ok"
    assert response.meta.planner == "offline"
    titles = tuple(s.title for s in response.sections if s.title != "Relevant Code")
    assert titles[: len(STANDARD_SECTIONS)] == STANDARD_SECTIONS
    # The code index points at real files of this repository, right after the analysis.
    assert response.sections[1].title == "Relevant Code"
    assert response.meta.relevant_files
    assert all((ROOT / path).is_file() for path in response.meta.relevant_files)
    # Then the sections nexusd adds when it has something to say (PROTOCOL.md, Responses).
    assert set(titles[len(STANDARD_SECTIONS) :]) <= {"Evidence from Memory", "Checks", "Checkpoint"}
    # The example talks about real files of this repository.
    request = parse_request(data, request_path.name)
    assert request.artifacts
    for artifact in request.artifacts:
        assert (ROOT / artifact).is_file(), f"{artifact} named by the example does not exist"
