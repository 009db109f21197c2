"""Writing a response file: nexusd's own unchanged text is replaced, anything else is kept."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

import nexusd.planner.response_file as response_file
from nexusd.planner.response_file import KeptFile, write_response
from nexusd.protocol.seal import seal_response, seal_state

MOMENT = datetime(2025, 5, 8, 14, 5, 0, tzinfo=UTC)
KEPT = "2025-05-08T14_02_11_plan_response.edited-2025-05-08T14_05_00.md"
OLD = "---\nrevision: 1\n---\n\n# Plan for cycle 1\n\n## Plan\n\n1. Read it.\n"
NEW = "---\nrevision: 2\n---\n\n# Plan for cycle 1\n\n## Plan\n\n1. Read it again.\n"
MINE = "\n- [x] done: merged in PR 12 (my note)\n"


def _text(calls: list[tuple[KeptFile, ...]]) -> Callable[[tuple[KeptFile, ...]], str]:
    """NEW with one line per kept file, as the pipeline puts them in `warnings`."""

    def text_for(kept: tuple[KeptFile, ...]) -> str:
        calls.append(kept)
        notes = "".join(f"warning: {k.note()}\n" for k in kept)
        return NEW.replace("revision: 2\n", f"revision: 2\n{notes}")

    return text_for


def _write(path: Path, calls: list[tuple[KeptFile, ...]]) -> tuple[KeptFile, ...]:
    return write_response(path, _text(calls), mode=0o644, now=lambda: MOMENT)


@pytest.fixture
def response(tmp_path: Path) -> Path:
    return tmp_path / "2025-05-08T14_02_11_plan_response.md"


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_new_response_is_written_sealed(response: Path) -> None:
    calls: list[tuple[KeptFile, ...]] = []
    assert _write(response, calls) == ()
    assert calls == [()]
    assert seal_state(response.read_bytes()) == "intact"
    assert response.read_text(encoding="utf-8") == seal_response(NEW)
    assert response.stat().st_mode & 0o777 == 0o644
    assert _names(response.parent) == [response.name]


def test_nexusds_own_unchanged_response_is_replaced_and_nothing_is_left(response: Path) -> None:
    response.write_text(seal_response(OLD), encoding="utf-8")
    assert _write(response, []) == ()
    assert response.read_text(encoding="utf-8") == seal_response(NEW)
    assert _names(response.parent) == [response.name]


def test_a_response_someone_edited_is_kept_beside_the_new_one(response: Path) -> None:
    edited = seal_response(OLD) + MINE
    response.write_text(edited, encoding="utf-8")
    calls: list[tuple[KeptFile, ...]] = []
    kept = _write(response, calls)
    assert kept == (KeptFile(response, response.with_name(KEPT), edited=True),)
    assert response.with_name(KEPT).read_text(encoding="utf-8") == edited  # every byte
    assert calls == [kept]  # the response was written once, already naming it
    text = response.read_text(encoding="utf-8")
    assert f"had been changed since nexusd wrote it; that version is kept as {KEPT}" in text
    assert seal_state(text.encode()) == "intact"
    assert _names(response.parent) == [KEPT, response.name]


def test_a_file_nexusd_did_not_seal_is_kept(response: Path) -> None:
    response.write_text("# A human wrote this plan\n", encoding="utf-8")
    kept = _write(response, [])
    assert kept == (KeptFile(response, response.with_name(KEPT), edited=False),)
    assert response.with_name(KEPT).read_text(encoding="utf-8") == "# A human wrote this plan\n"
    assert "delete it if it holds nothing of yours" in response.read_text(encoding="utf-8")


def test_an_edit_saved_after_the_check_is_kept_and_the_response_says_so(response: Path) -> None:
    # The response was nexusd's own when the write began; the person's save lands after that
    # look and before the old file is replaced.
    response.write_text(seal_response(OLD), encoding="utf-8")
    calls: list[tuple[KeptFile, ...]] = []
    first = _text(calls)

    def text_for(kept: tuple[KeptFile, ...]) -> str:
        if not calls:
            response.write_text(seal_response(OLD) + MINE, encoding="utf-8")
        return first(kept)

    kept = write_response(response, text_for, mode=0o644, now=lambda: MOMENT)
    assert [k.path.name for k in kept] == [KEPT]
    assert response.with_name(KEPT).read_text(encoding="utf-8").endswith(MINE)
    assert calls == [(), kept]  # written again, to name the kept file
    assert KEPT in response.read_text(encoding="utf-8")
    assert not [p for p in response.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_file_saved_at_the_path_while_it_was_free_is_not_replaced(
    response: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between setting the old response aside and linking the new one in, an editor saves
    # the person's buffer under the response's name.
    response.write_text(seal_response(OLD), encoding="utf-8")
    real = response_file.link_into_place
    saves = ["# my buffer, saved\n"]

    def save_first(staged: Path, path: Path) -> bool:
        if saves:
            path.write_text(saves.pop(), encoding="utf-8")
        return real(staged, path)

    monkeypatch.setattr(response_file, "link_into_place", save_first)
    calls: list[tuple[KeptFile, ...]] = []
    kept = _write(response, calls)
    assert [(k.path.name, k.edited) for k in kept] == [(KEPT, False)]
    assert response.with_name(KEPT).read_text(encoding="utf-8") == "# my buffer, saved\n"
    assert calls == [(), kept]
    assert seal_state(response.read_bytes()) == "intact"


def test_a_response_deleted_after_the_check_is_not_named_as_kept(response: Path) -> None:
    response.write_text(seal_response(OLD) + MINE, encoding="utf-8")
    calls: list[tuple[KeptFile, ...]] = []
    first = _text(calls)

    def text_for(kept: tuple[KeptFile, ...]) -> str:
        if not calls:
            response.unlink()  # the person deletes it: a fresh answer is wanted
        return first(kept)

    assert write_response(response, text_for, mode=0o644, now=lambda: MOMENT) == ()
    assert [len(c) for c in calls] == [1, 0]
    assert "kept" not in response.read_text(encoding="utf-8")
    assert _names(response.parent) == [response.name]


def test_kept_files_never_replace_each_other(response: Path) -> None:
    for n in range(3):
        response.write_text(f"# version {n}\n", encoding="utf-8")
        _write(response, [])
    names = [KEPT, KEPT.replace(".md", "-2.md"), KEPT.replace(".md", "-3.md")]
    kept = {p.name: p.read_text(encoding="utf-8") for p in response.parent.iterdir()}
    assert kept.pop(response.name).startswith("---\n")
    assert kept == {name: f"# version {n}\n" for n, name in enumerate(names)}


def test_a_fifo_at_the_path_is_kept_unread(response: Path) -> None:
    os.mkfifo(response)
    kept = _write(response, [])
    assert [k.edited for k in kept] == [False]
    assert kept[0].path.is_fifo()
    assert seal_state(response.read_bytes()) == "intact"


def test_a_folder_at_the_path_is_an_error_and_stays(response: Path) -> None:
    response.mkdir()
    (response / "notes.md").write_text("mine\n", encoding="utf-8")
    with pytest.raises(IsADirectoryError):
        _write(response, [])
    assert _names(response.parent) == [response.name]
    assert (response / "notes.md").read_text(encoding="utf-8") == "mine\n"


def test_when_files_keep_appearing_it_gives_up_and_says_where_they_all_are(
    response: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = response_file.link_into_place
    saved: list[str] = []

    def always_a_save_first(staged: Path, path: Path) -> bool:
        saved.append(f"# save {len(saved)}\n")
        path.write_text(saved[-1], encoding="utf-8")
        return real(staged, path)

    monkeypatch.setattr(response_file, "link_into_place", always_a_save_first)
    with pytest.raises(OSError, match="files kept appearing") as raised:
        _write(response, [])
    kept = [p for p in response.parent.iterdir() if p != response]
    assert len(kept) == response_file.MAX_SET_ASIDE - 1
    assert all(p.name in str(raised.value) for p in kept)
    # Every save is kept, none was replaced; no response was written: the last save is
    # back under its own name.
    assert response.read_text(encoding="utf-8") == saved[-1]
    assert sorted(p.read_text(encoding="utf-8") for p in kept) == sorted(saved[:-1])
    assert not [p for p in response.parent.iterdir() if p.name.endswith(".tmp")]


def test_two_writers_in_the_same_second_never_replace_each_others_kept_file(
    response: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two writers the claim does not serialise (another repository's daemon, `--repo`):
    # the second computed the same kept name before the first used it.
    from datetime import UTC, datetime

    response.write_text("---\nrevision: 1\n---\n\nMY PRECIOUS TEXT\n", encoding="utf-8")
    fixed = lambda: datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)  # noqa: E731
    real = response_file.staged_file
    ran: list[bool] = []

    def other_writer_first(path: Path, data: bytes, mode: int) -> Path:
        if not ran:
            ran.append(True)
            response_file.write_response(path, _mine("B"), mode=0o644, now=fixed)
        return real(path, data, mode=mode)

    monkeypatch.setattr(response_file, "staged_file", other_writer_first)
    response_file.write_response(response, _mine("A"), mode=0o644, now=fixed)
    texts = [p.read_text(encoding="utf-8") for p in response.parent.iterdir()]
    assert any("MY PRECIOUS TEXT" in t for t in texts)


def test_a_failed_link_leaves_the_earlier_response_in_place(
    response: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    response_file.write_response(response, _mine("one"), mode=0o644)
    before = response.read_bytes()
    real = os.link
    calls: list[int] = []

    def link(src: object, dst: object, **kw: object) -> None:
        calls.append(1)
        if len(calls) == 2:  # after the earlier response was set aside
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(OSError):
        response_file.write_response(response, _mine("two"), mode=0o644)
    assert response.read_bytes() == before
    assert [p.name for p in response.parent.iterdir()] == [response.name]


def _mine(who: str) -> Callable[[tuple[KeptFile, ...]], str]:
    return lambda kept: f"---\nrequest_sha256: x\nrevision: 2\nstatus: ok\nwho: {who}\n---\n\n# T\n"
