"""The copy of the shared client fixtures under tests/data stays what the clients wrote."""

from __future__ import annotations

import pytest

from tests.conftest import SHARED_COPY, beside_checkout


def test_the_copy_holds_the_client_fixtures() -> None:
    names = {p.name for p in (SHARED_COPY / "fixtures" / "oppie").iterdir()}
    assert "2025-05-08T14_02_11_plan_request.md" in names


def test_the_copy_matches_the_shared_folder_byte_for_byte() -> None:
    shared = beside_checkout()
    if shared is None:
        pytest.skip("no ../shared beside this clone to compare with")
    ours = {
        p.relative_to(SHARED_COPY): p.read_bytes() for p in SHARED_COPY.rglob("*") if p.is_file()
    }
    theirs = {
        p.relative_to(shared): p.read_bytes()
        for p in (shared / "fixtures").rglob("*")
        if p.is_file()
    }
    assert ours == theirs, "refresh tests/data/shared/fixtures from ../shared/fixtures"
