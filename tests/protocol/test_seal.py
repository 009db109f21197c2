"""The seal on a response: nexusd's own text, unchanged, is told apart from anything else."""

from __future__ import annotations

import pytest
import yaml

from nexusd.protocol.documents import PlanResponse, ResponseMeta, Section
from nexusd.protocol.render import read_response_meta, render_response
from nexusd.protocol.seal import SEAL_KEY, seal_response, seal_state

RESPONSE = PlanResponse(
    meta=ResponseMeta(
        request_file="2025-05-08T14_02_11_plan_request.md",
        request_sha256="ab" * 32,
        revision=1,
        status="ok",
        planner="offline",
        created_at="2025-05-08T14:02:11+00:00",
        warnings=("a warning long enough to be folded by the YAML dumper " * 3,),
    ),
    title="Plan for cycle 1: Explain the README",
    sections=(Section("Plan", "1. Read it.\n---\n2. Explain it."),),
)
TEXT = render_response(RESPONSE)


def test_a_sealed_response_is_intact_and_still_reads_as_a_response() -> None:
    sealed = seal_response(TEXT)
    assert seal_state(sealed.encode()) == "intact"
    meta = read_response_meta(sealed)
    assert meta is not None and isinstance(meta[SEAL_KEY], str) and len(meta[SEAL_KEY]) == 64
    # The seal is the front matter's last line; the body is untouched.
    assert sealed.replace(f"{SEAL_KEY}: {meta[SEAL_KEY]}\n", "") == TEXT


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda t: t + "- [x] done: merged in PR 12\n", id="note-appended"),
        pytest.param(lambda t: t.replace("1. Read it.", "1. Read it twice."), id="word-changed"),
        pytest.param(lambda t: t.replace("revision: 1", "revision: 1\nreviewed: yes"), id="key"),
        pytest.param(lambda t: t.replace("2. Explain it.\n", ""), id="line-deleted"),
        pytest.param(lambda t: t.replace("---\n", "", 1), id="front-matter-opened-anew"),
    ],
)
def test_any_change_to_a_sealed_response_is_an_edit(edit: object) -> None:
    sealed = seal_response(TEXT)
    changed = edit(sealed)  # type: ignore[operator]
    assert changed != sealed
    assert seal_state(changed.encode()) in {"edited", "unsealed"}
    assert seal_state(changed.encode()) != "intact"


def test_line_endings_converted_by_git_are_not_an_edit() -> None:
    sealed = seal_response(TEXT)
    assert seal_state(sealed.replace("\n", "\r\n").encode()) == "intact"
    assert seal_state(b"\xef\xbb\xbf" + sealed.encode()) == "intact"


def test_a_changed_seal_is_an_edit_and_no_seal_is_unsealed() -> None:
    sealed = seal_response(TEXT)
    meta = read_response_meta(sealed)
    assert meta is not None
    forged = sealed.replace(str(meta[SEAL_KEY]), "0" * 64)
    assert seal_state(forged.encode()) == "edited"
    assert seal_state(TEXT.encode()) == "unsealed"  # an older nexusd's response
    assert seal_state(b"# A human wrote this plan\n") == "unsealed"
    assert seal_state(sealed.encode()[:-3] + b"\xff\xfe\n") == "edited"  # not UTF-8 any more


def test_a_seal_line_in_the_body_is_not_a_seal() -> None:
    body_only = TEXT + f"{SEAL_KEY}: {'0' * 64}\n"
    assert seal_state(body_only.encode()) == "unsealed"


def test_only_a_response_with_front_matter_can_be_sealed() -> None:
    with pytest.raises(ValueError, match="front matter"):
        seal_response("# no front matter\n")


def test_a_digest_of_decimal_digits_stays_a_string() -> None:
    # yaml would load 64 decimal digits as an int; the dumper quotes them, the check reads both.
    assert yaml.safe_load(f"{SEAL_KEY}: '{'1' * 64}'") == {SEAL_KEY: "1" * 64}
    text = "---\na: 1\n---\n"
    sealed = seal_response(text)
    quoted = sealed.replace(f"{SEAL_KEY}: ", f"{SEAL_KEY}: '").replace("\n---\n", "'\n---\n")
    assert seal_state(quoted.encode()) == "intact"
