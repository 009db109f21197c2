"""Reading a commit from a local clone for the localization benchmarks: its tree, its blobs
(one `git cat-file --batch`), a tar of it even when the clone lacks some blobs, and the paths
a patch changes."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

_DIFF = re.compile(r"^diff --git a/(\S+) b/", re.M)


def patch_paths(patch: str) -> list[str]:
    """The paths a unified diff (`git diff`'s, as SWE-bench rows carry) changes, in order."""
    return list(dict.fromkeys(_DIFF.findall(patch)))


def partial_tar(repo: Path, commit: str) -> tuple[bytes, list[str]]:
    """A tar of `commit` made of the blobs the clone has, and the paths of those it lacks."""
    entries = tree(repo, commit)
    found = dict(blobs(repo, sorted({blob for _path, blob, _mode in entries})))
    buffer, missing = io.BytesIO(), []
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, blob, mode in entries:
            data = found.get(blob)
            if data is None:
                missing.append(path)
                continue
            info = tarfile.TarInfo(path)
            if mode == "120000":
                info.type, info.linkname = tarfile.SYMTYPE, data.decode("utf-8", "surrogateescape")
                tar.addfile(info)
                continue
            info.size, info.mode = len(data), 0o755 if mode == "100755" else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue(), missing


def tree(repo: Path, commit: str) -> list[tuple[str, str, str]]:
    """(path, blob id, mode) of every blob of `commit`."""
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", commit], cwd=repo, capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    entries = []
    for line in out.split("\0"):
        meta, _, path = line.partition("\t")
        if path and meta.split()[1] == "blob":
            mode, _kind, blob = meta.split()
            entries.append((path, blob, mode))
    return entries


def blobs(repo: Path, ids: list[str]) -> Iterator[tuple[str, bytes]]:
    """The content of each blob id the clone has, through one `git cat-file --batch`; a blob
    it lacks (a pruned mirror's large data file) is skipped."""
    proc = subprocess.Popen(
        ["git", "cat-file", "--batch"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin and proc.stdout
    for blob in ids:
        proc.stdin.write(f"{blob}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3:  # "<id> missing"
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        yield blob, data
    proc.stdin.close()
    proc.wait()
