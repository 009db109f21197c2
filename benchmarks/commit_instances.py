"""Localization instances from a repository's own fix commits, for languages no set of bug
reports covers here (PHP, Ruby, …).

A commit whose message says it fixes something and that changes exactly one source file of
the chosen language (beside tests, changelogs and docs) becomes a row shaped like
`swe-lite-loc`'s: instance_id, repo, base_commit (its parent), problem_statement (its message
without trailers), gold_files (that file), language. A commit message is a proxy for a bug
report, and a kinder one: it is written by whoever fixed the bug and often names what changed
(`[Fix #123] Fix a false positive for Style/Foo`). Compare rankings on these rows with each
other (a grammar against line windows, a change against the code before it), not with the
report sets' figures.

    python benchmarks/commit_instances.py --repo CLONE --name owner/name --ext .rb \\
        --limit 40 --out rows.jsonl
    python benchmarks/localization_offline.py --repos MIRRORS --instances rows.jsonl --baseline
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nexusd.code.places import is_auxiliary_path, is_test_path

_FIX = re.compile(r"\bfix(?:e[sd])?\b|\bbug\b|\bregression\b", re.I)
_TRAILER = re.compile(r"^[A-Z][\w-]*(?:-by|-authored-by)?:\s", re.M)
_PR = re.compile(r"\s*\(#\d+\)\s*$")
_SEP = "\x1e"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def message(raw: str) -> str:
    """The commit message as a request: no trailers (`Signed-off-by: …`), no `(#123)`."""
    lines = raw.strip().splitlines()
    while lines and (not lines[-1].strip() or _TRAILER.match(lines[-1])):
        lines.pop()
    if lines:
        lines[0] = _PR.sub("", lines[0])
    return "\n".join(lines).strip()


def source_changes(name_status: str, ext: str) -> tuple[list[str], bool]:
    """The modified source files of the language, and whether the commit only modifies,
    adds tests, or touches text beside them (no other code, no renames, no deletions)."""
    sources, clean = [], True
    for line in name_status.splitlines():
        status, _, path = line.partition("\t")
        if not path:
            continue
        code = path.endswith(ext)
        if not code or is_test_path(path) or is_auxiliary_path(path):
            continue
        if status != "M":
            clean = False
        sources.append(path)
    return sources, clean


def rows(repo: Path, name: str, ext: str, limit: int, language: str) -> list[dict[str, str]]:
    """The newest `limit` single-file fix commits of the repository's first-parent history."""
    out: list[dict[str, str]] = []
    log = _git(repo, "log", "--first-parent", "--no-merges", f"--format=%H %P{_SEP}%B{_SEP}")
    parts = log.split(_SEP)
    for head, body in zip(parts[0::2], parts[1::2], strict=False):
        ids = head.split()
        if len(ids) != 2 or not _FIX.search(body):
            continue
        commit, parent = ids
        text = message(body)
        if len(text) < 20:
            continue
        changed = _git(repo, "diff-tree", "--no-commit-id", "--name-status", "-r", parent, commit)
        sources, clean = source_changes(changed, ext)
        if len(sources) != 1 or not clean:
            continue
        out.append(
            {
                "instance_id": f"{name.replace('/', '__')}-{commit[:10]}",
                "repo": name,
                "base_commit": parent,
                "problem_statement": text,
                "gold_files": sources,
                "language": language,
            }
        )
        if len(out) == limit:
            break
    return out


def main() -> None:
    """Write the rows of one repository (appended to --out)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="a clone (bare or not)")
    ap.add_argument("--name", required=True, help="owner/name, as the clones folder spells it")
    ap.add_argument("--ext", required=True, help="the language's file extension, e.g. .rb")
    ap.add_argument("--language", default="", help="the language's name (default: the ext)")
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    repo = args.repo / ".git" if (args.repo / ".git").is_dir() else args.repo
    if not (repo / "HEAD").is_file():
        sys.exit(f"{args.repo}: not a git clone (no HEAD); pass a clone's folder or its .git")
    found = rows(repo, args.name, args.ext, args.limit, args.language or args.ext.lstrip("."))
    with args.out.open("a", encoding="utf-8") as fh:
        for row in found:
            fh.write(json.dumps(row) + "\n")
    print(f"{args.name}: {len(found)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
