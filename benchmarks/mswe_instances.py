"""Localization instances in other languages, from a public copy of Multi-SWE-bench.

Multi-SWE-bench (C, C++, Go, Java, JavaScript, TypeScript, Rust) keeps, per pull request, the
issues it resolves, its base commit and its fix patch (tests apart). This script turns the
ones whose fix changes exactly one file into rows shaped like `swe-lite-loc`'s (instance_id,
repo, base_commit, problem_statement = the first resolved issue's title and body,
gold_files), plus `language`, which `localization_offline.py --baseline` uses to rank the
language's source files; and, with `--patches`, the fix patches for its function level.

    python benchmarks/mswe_instances.py --dataset DIR --out mswe.jsonl --patches mswe_patches.jsonl
    python benchmarks/localization_offline.py --repos MIRRORS --instances mswe.jsonl --baseline

`--dataset` is a git clone (bare or not) holding `MSWE-agent/data/<language>/*.jsonl`, as
github.com/kuppireddypravalika/MSWE-validation-dataset does; files stored as Git LFS
pointers there are skipped. `--repos` (optional) keeps only instances whose repository has
a clone under that folder (`owner+name/repo`, `owner+name` or `name`, case-insensitive),
and writes the repository's name as the clone spells it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from _commits import patch_paths

DATA = "MSWE-agent/data"


def dataset_files(dataset: Path) -> list[tuple[str, str]]:
    """(language, path) of each per-repository JSONL file in the dataset's HEAD."""
    out = subprocess.run(
        ["git", "-C", str(dataset), "ls-tree", "-r", "--name-only", "HEAD", DATA],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        (path.split("/")[2], path)
        for path in out.split()
        if path.endswith(".jsonl") and path.count("/") == 3
    ]


def rows(dataset: Path, language: str, path: str) -> list[dict[str, Any]]:
    """The pull requests of one file; none when it is a Git LFS pointer or its blob is not in
    the clone (a snapshot without its largest files)."""
    shown = subprocess.run(
        ["git", "-C", str(dataset), "show", f"HEAD:{path}"], capture_output=True, check=False
    )
    data = shown.stdout
    if shown.returncode != 0 or data.startswith(b"version https://git-lfs"):
        print(f"{path}: skipped (a Git LFS pointer, or not in this clone)", file=sys.stderr)
        return []
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip():
            try:
                found.append(json.loads(line) | {"language": language})
            except json.JSONDecodeError:
                continue
    return found


def instance(pr: dict[str, Any]) -> dict[str, Any] | None:
    """The swe-lite-loc shaped row of a pull request whose fix changes one file, else None."""
    files = patch_paths(pr.get("fix_patch") or "")
    issues = pr.get("resolved_issues") or []
    if len(files) != 1 or not issues:
        return None
    issue = issues[0]
    return {
        "instance_id": f"{pr['org']}__{pr['repo']}-{pr['number']}",
        "repo": f"{pr['org']}/{pr['repo']}",
        "base_commit": pr["base"]["sha"],
        "problem_statement": f"{(issue.get('title') or '').strip()}\n{issue.get('body') or ''}",
        "gold_files": files,
        "language": pr["language"],
        "patch": pr["fix_patch"],
    }


def clones(repos: Path) -> dict[str, str]:
    """owner/name (lower-cased) → owner/name as a clone under `repos` spells it."""
    return {d.name.replace("+", "/").lower(): d.name.replace("+", "/") for d in repos.iterdir()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="the dataset's git clone")
    parser.add_argument("--out", type=Path, required=True, help="instances (JSONL)")
    parser.add_argument("--patches", type=Path, default=None, help="fix patches (JSONL)")
    parser.add_argument("--repos", type=Path, default=None, help="keep repositories cloned here")
    args = parser.parse_args()
    known = clones(args.repos) if args.repos else None
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for language, path in dataset_files(args.dataset):
        for pr in rows(args.dataset, language, path):
            row = instance(pr)
            if row is None or row["instance_id"] in seen:
                skipped["not one file, or no issue"] += row is None
                continue
            seen.add(row["instance_id"])
            if known is not None:
                if row["repo"].lower() not in known:
                    skipped["no clone"] += 1
                    continue
                row["repo"] = known[row["repo"].lower()]
            kept.append(row)
    with args.out.open("w", encoding="utf-8") as out:
        for row in kept:
            out.write(json.dumps({k: v for k, v in row.items() if k != "patch"}) + "\n")
    if args.patches:
        with args.patches.open("w", encoding="utf-8") as out:
            for row in kept:
                out.write(json.dumps({"instance_id": row["instance_id"], "patch": row["patch"]}))
                out.write("\n")
    by_language = Counter(row["language"] for row in kept)
    print(f"{len(kept)} instances {dict(by_language)}; left out {dict(skipped)}", file=sys.stderr)


if __name__ == "__main__":
    main()
