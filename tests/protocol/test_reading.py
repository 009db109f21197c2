"""Reading nexusd's own responses back: the whole front matter, however long it grew."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.errors import ProtocolError
from nexusd.planner.rejection import error_response
from nexusd.protocol.parse import parse_request
from nexusd.protocol.reading import META_BYTES, response_meta
from nexusd.protocol.render import render_response

REQUEST = "2025-04-20T08_11_37_plan_request.md"


def test_a_response_whose_front_matter_is_over_64_kib_is_still_ours(tmp_path: Path) -> None:
    # What nexusd wrote before it cut echoed values: an error quoting a 70 000-character value.
    error = ProtocolError(f"the cycle must be a whole number, got {'x' * 70_000!r}", field="cycle")
    answer = error_response(
        error, request_name=REQUEST, sha256="ab" * 32, revision=3, created_at="now", timings={}
    )
    response = tmp_path / "2025-04-20T08_11_37_plan_response.md"
    response.write_text(render_response(answer), encoding="utf-8")
    assert response.stat().st_size > META_BYTES

    exists, meta = response_meta(response)

    assert exists and meta is not None
    assert (meta["request_sha256"], meta["revision"], meta["status"]) == ("ab" * 32, 3, "error")


def test_a_foreign_file_with_an_unclosed_front_matter_is_not_ours(tmp_path: Path) -> None:
    response = tmp_path / "2025-04-20T08_11_37_plan_response.md"
    response.write_text("---\nstatus: ok\n" + "x: y\n" * 40_000, encoding="utf-8")

    assert response_meta(response) == (True, None)


def test_an_error_about_a_huge_value_quotes_only_its_start() -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_request(f"---\ncycle: {'7x' * 35_000}\ngoal: Explain\n---\n", REQUEST)

    assert caught.value.field == "cycle"
    assert "7x7x7x" in caught.value.message and len(caught.value.message) < 200
