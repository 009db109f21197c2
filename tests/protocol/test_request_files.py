"""create_request_file: whole files on first sight, never replacing another request."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexusd.errors import NexusError
from nexusd.protocol.naming import is_request_file
from nexusd.protocol.parse import parse_request
from nexusd.protocol.render import render_request
from nexusd.protocol.request_files import create_request_file

NOW = datetime(2025, 4, 20, 8, 11, 37, tzinfo=UTC)


def test_creates_folder_and_canonical_name(tmp_path: Path) -> None:
    folder = tmp_path / ".scratchpad_logs"
    path = create_request_file(folder, render_request(goal="Ship it"), NOW)
    assert path == folder / "2025-04-20T08_11_37_plan_request.md"
    assert parse_request(path.read_bytes(), str(path)).goal == "Ship it"
    assert path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in folder.iterdir()] == [path.name]  # no temp file left


def test_same_second_never_overwrites(tmp_path: Path) -> None:
    goals = [f"goal {i}" for i in range(20)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        paths = list(
            pool.map(lambda g: create_request_file(tmp_path, render_request(goal=g), NOW), goals)
        )
    assert len(set(paths)) == 20
    assert all(is_request_file(p) for p in paths)
    found = sorted(parse_request(p.read_bytes(), str(p)).goal for p in paths)
    assert found == sorted(goals)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_a_folder_outside_the_root_is_refused_and_left_untouched(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (root / ".scratchpad_logs").symlink_to(out, target_is_directory=True)

    for folder in (root / ".scratchpad_logs", root / ".scratchpad_logs" / "deeper", out / "x"):
        with pytest.raises(NexusError, match="outside the repository"):
            create_request_file(folder, render_request(goal="Ship it"), NOW, root=root)

    assert list(out.iterdir()) == []
    inside = create_request_file(root / "plans", render_request(goal="Ship it"), NOW, root=root)
    assert inside.parent == root / "plans"


@pytest.mark.parametrize("where", ["folder", "parent"])
def test_a_file_where_the_folder_should_be_is_an_error_that_says_what_to_do(
    tmp_path: Path, where: str
) -> None:
    # It raised FileExistsError / NotADirectoryError: `nexusd request new` printed a
    # traceback and called it a bug in nexusd (exit 70).
    blocker = tmp_path / ".scratchpad_logs"
    blocker.write_text("not a folder\n", encoding="utf-8")
    folder = blocker if where == "folder" else blocker / "sub"

    with pytest.raises(NexusError) as info:
        create_request_file(folder, "Plan it\n", datetime(2025, 5, 8, tzinfo=UTC), root=tmp_path)

    assert "is a file, not a folder; nothing was written" in info.value.message
    assert info.value.hint is not None and "--dir" in info.value.hint
    assert blocker.read_text(encoding="utf-8") == "not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".scratchpad_logs"]
