"""read_inside: a regular file inside the repository, reached without following links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexusd.code.reader import parse_one, read_inside
from nexusd.processes import pid_alive
from tests.conftest import children_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("token = 'no'\n")
    (root / "alias").symlink_to("pkg")  # a folder link that stays inside
    (root / "escape").symlink_to(tmp_path / "outside")
    os.mkfifo(root / "pipe")
    return root


@pytest.mark.parametrize(
    ("rel", "inside_links", "expected"),
    [
        ("pkg/core.py", False, b"x = 1\n"),
        ("pkg/./../pkg/core.py", False, b"x = 1\n"),
        (".", False, "not a regular file (not read)"),
        ("pkg", False, "not a regular file (not read)"),
        ("pipe", False, "not a regular file (not read)"),
        ("escape/secret.py", False, "leads outside the repository (not read)"),
        ("escape/secret.py", True, "leads outside the repository (not read)"),
        ("../outside/secret.py", False, "leads outside the repository (not read)"),
        ("alias/core.py", True, b"x = 1\n"),  # the link's checked target is read
    ],
)
def test_what_is_read_and_what_is_refused(
    tree: Path, rel: str, inside_links: bool, expected: bytes | str
) -> None:
    assert read_inside(tree, rel, 1000, inside_links=inside_links) == expected


def test_a_folder_link_on_the_way_is_never_followed_without_inside_links(tree: Path) -> None:
    # Each step is opened without following links, so a folder swapped for a link after the
    # containment check cannot lead the read out of the repository.
    found = read_inside(tree, "alias/core.py", 1000)
    assert isinstance(found, str) and found.startswith("unreadable")


OWNER = """
import sys
from pathlib import Path
from nexusd.code.reader import parse_many

root = Path(sys.argv[1])
items = [(p.name, "python") for p in sorted(root.glob("*.py"))]
for _ in parse_many(root, items, 10_000_000, workers=2):
    print("first chunk", flush=True)  # the other chunks are still being parsed
    sys.stdin.read()  # held here until killed
"""


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        kids = children_of(todo.pop())
        found |= kids
        todo.extend(kids)
    return found


def test_workers_and_their_fork_server_go_when_their_owner_is_killed(tmp_path: Path) -> None:
    """A daemon killed mid-update leaves no parser worker, fork server or resource tracker
    behind (they waited on each other's pipes forever)."""
    import subprocess
    import sys
    import time

    body = "".join(f"def f{i}(x):\n    return [x + {i} for _ in range(3)]\n\n" for i in range(3000))
    for i in range(48):
        (tmp_path / f"mod{i:02d}.py").write_text(body, encoding="utf-8")
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        assert owner.stdout.readline() == "first chunk\n"
        helpers = _descendants(owner.pid)
        assert len(helpers) >= 3  # two workers and the fork server, at least
    finally:
        owner.kill()
        owner.wait()
    deadline = time.monotonic() + 20
    while any(pid_alive(pid) for pid in helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in helpers if pid_alive(pid)]


def test_a_python_file_with_a_utf8_byte_order_mark_parses(tmp_path: Path) -> None:
    # Python runs a file that starts with a BOM; `ast` given its decoded text said
    # "invalid non-printable character U+FEFF" and the file lost all its units.
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfdef bom_fn():\n    return 1\n")
    (tmp_path / "bom.js").write_bytes(b"\xef\xbb\xbffunction bomJs() { return 1 }\n")
    parsed = parse_one(str(tmp_path), "bom.py", "python", 1 << 20)
    assert parsed.status == "ok" and [u.name for u in parsed.units][1:] == ["bom_fn"]
    assert parsed.units[1].start == 1
    parsed = parse_one(str(tmp_path), "bom.js", "javascript", 1 << 20)
    assert parsed.status == "ok" and [u.name for u in parsed.units][1:] == ["bomJs"]
