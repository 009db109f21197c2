"""The blobs the code index reads at a commit, parsed once per (path, blob) into a cache.

`localization_offline.py` and its harnesses rank every report of a repository from this
cache: each base commit's files as `selection.Selection` picks them (its `.gitattributes`
read), each blob parsed by the index's own reader, in worker processes.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from _commits import blobs, tree

from nexusd.code.reader import Counted, counted, parse_content, too_large
from nexusd.code.selection import DEFAULT_EXCLUDE, OWN_FILES, RepoFile, Selected, Selection
from nexusd.config import config_from_mapping

CONFIG = config_from_mapping({}, "benchmark")


def selected(repo: Path, commit: str) -> Selected:
    """What the index reads at `commit` (selection.Selection), the commit's own
    `.gitattributes` read for what they vendor and mark generated, as the daemon reads its tree."""
    files = [RepoFile(path, blob, mode) for path, blob, mode in tree(repo, commit)]

    def read(found: list[RepoFile]) -> dict[str, bytes]:
        contents = dict(blobs(repo, sorted({f.blob for f in found})))
        return {f.path: contents[f.blob] for f in found if f.blob in contents}

    selection = Selection(DEFAULT_EXCLUDE, OWN_FILES, CONFIG.code.max_files, attributes=True)
    return selection.select(files, read)


def listed(repo: Path, commit: str) -> list[tuple[str, str, str]]:
    """(path, blob, language) of the files the index reads at `commit` (`selected`)."""
    wanted = selected(repo, commit).wanted
    return [(path, blob, language) for path, (blob, language) in wanted.items()]


def parse_blob(path: str, data: bytes, language: str) -> Counted:
    """reader.parse_counted on a blob already read."""
    limit = CONFIG.code.max_file_bytes
    content = data if len(data) <= limit else too_large(len(data), limit)
    return counted(parse_content(path, content, language))


def _parse_batch(items: list[tuple[str, bytes, str]]) -> list[Counted]:
    return [parse_blob(*item) for item in items]


def fill_cache(
    repo: Path, items: list[dict[str, Any]], cache: dict[tuple[str, str], Counted]
) -> int:
    """Parse every (path, blob) the instances' base commits hold that the cache lacks."""
    todo: dict[tuple[str, str], str] = {}
    for item in items:
        for path, blob, language in listed(repo, item["base_commit"]):
            if (path, blob) not in cache:
                todo[(path, blob)] = language
    if not todo:
        return 0
    keys = list(todo)
    contents = dict(blobs(repo, sorted({blob for _, blob in keys})))
    absent = {b for _, b in keys if b not in contents}
    if absent:
        # A snapshot without its largest blobs: those files are indexed as empty.
        print(f"{repo}: {len(absent)} blob(s) absent, indexed as empty", file=sys.stderr)
        contents.update(dict.fromkeys(absent, b""))
    batches = [keys[i : i + 64] for i in range(0, len(keys), 64)]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [[(p, contents[b], todo[(p, b)]) for p, b in batch] for batch in batches]
        for batch, done in zip(batches, pool.map(_parse_batch, jobs), strict=True):
            for key, counted in zip(batch, done, strict=True):
                cache[key] = counted
    return len(todo)
