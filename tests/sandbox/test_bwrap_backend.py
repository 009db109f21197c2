"""The bubblewrap backend's start-up: the sandbox is built while the tree is unpacked."""

from __future__ import annotations

import io
import tarfile
import uuid
from collections.abc import Callable

import pytest

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
