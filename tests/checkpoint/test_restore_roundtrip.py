"""Property: checkpoint, mutate at random, restore → the snapshot is back, nothing else moved."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexusd.checkpoint.restore import restore_checkpoint
from nexusd.checkpoint.snapshot import create_checkpoint
from nexusd.paths import find_repo

from .gitutil import git, git_state, tree_files

DIRS = ["", "d/", "d/e/", "x y/", "ü/"]
NAMES = ["a", "b.txt", "c.bin", "d", "n\nl"]
IGNORED = ["z.log", "d/z.log", "ignored/k", "d/e/z.log"]
LINK_TARGETS = ["a", "../a", "d", "nowhere", "b.txt"]

paths = st.builds(lambda d, n: d + n, st.sampled_from(DIRS), st.sampled_from(NAMES))
contents = st.one_of(st.binary(max_size=64), st.sampled_from([b"", b"\0\xff" * 100, b"x\n"]))
entries = st.tuples(
    st.sampled_from(["file", "exec", "link"]), contents, st.sampled_from(LINK_TARGETS)
)
tree = st.dictionaries(paths, entries, max_size=6)
mutation = st.one_of(
    st.tuples(st.just("write"), paths, entries),
    st.tuples(st.just("delete"), paths, entries),
    st.tuples(st.just("ignored"), st.sampled_from(IGNORED), entries),
)


def _is_ignored(rel: str) -> bool:
    return rel.endswith(".log") or rel.startswith("ignored/")


def _force_write(root: Path, rel: str, entry: tuple[str, bytes, str]) -> None:
    kind, data, target = entry
    parts = rel.split("/")
    for i in range(1, len(parts)):
        anc = root.joinpath(*parts[:i])
        if anc.is_symlink() or (anc.exists() and not anc.is_dir()):
            anc.unlink()
        anc.mkdir(exist_ok=True)
    path = root / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    if kind == "link":
        os.symlink(target, path)
    else:
        path.write_bytes(data)
        path.chmod(0o755 if kind == "exec" else 0o644)


def _delete(root: Path, rel: str) -> None:
    path = root / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _split(files: dict[str, tuple[str, bytes]]) -> tuple[dict, dict]:
    plain = {p: v for p, v in files.items() if not _is_ignored(p)}
    ignored = {p: v for p, v in files.items() if _is_ignored(p)}
    return plain, ignored


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tracked=tree, untracked=tree, mutations=st.lists(mutation, max_size=8), stage=st.booleans())
def test_restore_round_trip(
    tracked: dict[str, tuple[str, bytes, str]],
    untracked: dict[str, tuple[str, bytes, str]],
    mutations: list[tuple[str, str, tuple[str, bytes, str]]],
    stage: bool,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "r"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        (root / ".gitignore").write_text("*.log\nignored/\n")
        (root / "base.txt").write_text("base\n")
        for rel, entry in tracked.items():
            _force_write(root, rel, entry)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "tracked")
        (root / "base.txt").write_text("stashed change\n")
        git(root, "stash", "-q")
        for rel, entry in untracked.items():
            _force_write(root, rel, entry)
        for rel in IGNORED[:2]:
            _force_write(root, rel, ("file", b"precious", ""))
        if stage:
            git(root, "add", "-A")
        layout = find_repo(root)
        snap_files, _ = _split(tree_files(root))
        cp = create_checkpoint(layout, reason="request")

        for op, rel, entry in mutations:
            if op == "delete":
                _delete(root, rel)
            else:
                _force_write(root, rel, entry)
        before_plain, before_ignored = _split(tree_files(root))
        state = git_state(root)

        dry = restore_checkpoint(layout, cp.id, dry_run=True)
        result = restore_checkpoint(layout, cp.id)

        # The dry run announced exactly what happened, except writes found blocked on the spot.
        blocked = {s.path for s in result.skipped} - {s.path for s in dry.skipped}
        assert {c.path for c in dry.changes} == {c.path for c in result.changes} | blocked
        assert {s.path for s in dry.skipped} <= {s.path for s in result.skipped}
        after_plain, after_ignored = _split(tree_files(root))
        skipped = {c.path for c in result.skipped}
        for path in skipped:
            assert any(
                _is_ignored(p) and (p == path or p.startswith(path + "/") or path.startswith(p))
                for p in before_ignored
            ), f"{path!r} skipped without an ignored file in the way"
        assert {p: v for p, v in after_plain.items() if p not in skipped} == {
            p: v for p, v in snap_files.items() if p not in skipped
        }
        assert after_ignored == before_ignored
        assert git_state(root) == state

        if result.pre_restore is not None:
            restore_checkpoint(layout, result.pre_restore.id)
            undone_plain, undone_ignored = _split(tree_files(root))
            assert undone_plain == before_plain
            assert undone_ignored == before_ignored
            assert git_state(root) == state
        else:
            assert before_plain == snap_files
