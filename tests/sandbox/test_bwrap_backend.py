"""The bubblewrap backend's start-up: the sandbox is built while the tree is unpacked."""

from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from nexusd.errors import SandboxError
from nexusd.sandbox import bwrap_backend
from nexusd.sandbox.spec import CheckSpec
from tests.sandbox.conftest import host_processes

pytestmark = pytest.mark.bwrap


def _tar(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_the_check_starts_only_once_the_whole_tree_is_there(
    bwrap_usable: None, make_spec: Callable[..., CheckSpec]
) -> None:
    files = {f"pkg/module_{i}.py": f"VALUE = {i}\n".encode() * 50 for i in range(200)}
    spec = make_spec("ls pkg | wc -l; cat pkg/module_199.py | wc -l")
    result = bwrap_backend.run(spec, _tar(files))
    assert result.status == "passed", result.stderr
    assert result.stdout.split() == ["200", "50"]


def test_a_failed_unpack_kills_the_waiting_sandbox(
    bwrap_usable: None, make_spec: Callable[..., CheckSpec]
) -> None:
    marker = f"never-started-{uuid.uuid4().hex}"
    # A tree cut off in the middle of a member: the unpack fails halfway through.
    whole = _tar({"ok.txt": b"fine\n", "big.bin": b"x" * 20_000})
    bad = whole[: len(whole) // 2]
    with pytest.raises(tarfile.ReadError):
        bwrap_backend.run(make_spec(f"echo {marker}; sleep 30"), bad)
    assert host_processes(marker) == []


def test_a_read_only_bind_under_tmp_is_seen_inside(
    bwrap_usable: None, make_spec: Callable[..., CheckSpec]
) -> None:
    # Bound before the sandbox's own /tmp tmpfs, a folder under /tmp (a virtualenv there)
    # was hidden by it. Made straight under /tmp, readable by all: as root the sandbox
    # runs as uid 65534, which pytest's 0700 base folder would keep out.
    shared = Path(tempfile.mkdtemp(prefix="nexusd-test-bind-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        (shared / "marker").write_text("bound\n")
        (shared / "marker").chmod(0o644)
        spec = make_spec(f"cat {shared}/marker")
        result = bwrap_backend.run(spec, _tar({}), ro_binds=[str(shared)])
    finally:
        shutil.rmtree(shared)
    assert result.status == "passed", result.stderr
    assert result.stdout.strip() == "bound"


def test_a_bind_the_sandbox_cannot_make_fails_the_check_with_bwraps_reason(
    bwrap_usable: None, make_spec: Callable[..., CheckSpec], tmp_path: Path
) -> None:
    # Below pytest's 0700 base folder: as root the sandbox runs as uid 65534, which cannot
    # reach it, so bwrap exits before the tree is in (the gate's write hit a closed pipe).
    hidden = tmp_path / "toolchain"
    hidden.mkdir()
    tmp_path.chmod(0o700)
    # A tree that takes a while to unpack: bwrap has given up before it is in.
    tree = _tar({f"src/f{i}.c": b"int x;\n" * 200 for i in range(3000)})
    with pytest.raises(SandboxError) as info:
        bwrap_backend.run(make_spec("echo ran"), tree, ro_binds=[str(hidden)])
    assert str(hidden) in info.value.message and "did not run" in info.value.message


def test_a_sandbox_bwrap_cannot_build_is_a_sandbox_error_not_a_failed_check(
    bwrap_usable: None, make_spec: Callable[..., CheckSpec], tmp_path: Path
) -> None:
    # A read-only bind the sandbox's user cannot reach (as root: a venv under /root, which
    # uid 65534 cannot enter). It used to read as the check failing ("nonzero exit", "the
    # command reported a failure"), and three such runs became a lesson about the code.
    locked = tmp_path / "locked"
    (locked / "venv").mkdir(parents=True)
    locked.chmod(0o000)
    try:
        with pytest.raises(SandboxError, match="bubblewrap could not build") as info:
            bwrap_backend.run(make_spec("echo ran"), _tar({}), ro_binds=[str(locked / "venv")])
    finally:
        locked.chmod(0o755)
    assert str(locked / "venv") in info.value.message
    assert "ro_binds" in (info.value.hint or "")


def test_a_check_can_write_to_dev_stdout_and_dev_stderr(
    bwrap_usable: None, make_spec: Callable[..., CheckSpec]
) -> None:
    # As root the sandbox runs as uid 65534, and reopening a pipe root made (what
    # `> /dev/stderr` does) was "Permission denied": common shell scripts failed.
    spec = make_spec("echo out > /dev/stdout && echo err > /dev/stderr")
    result = bwrap_backend.run(spec, _tar({}))
    assert result.status == "passed", result.stderr
    assert (result.stdout, result.stderr) == ("out\n", "err\n")
