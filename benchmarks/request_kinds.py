"""Which kind of work real bug reports are classified as: the plan's steps follow the kind.

Every report in `../shared/eval-data/swe-lite-loc/instances.jsonl` (110 SWE-bench Lite
problem statements, pasted whole as a user would) was fixed by a change to the code. A
plan for such a report that reads it as docs, a refactor (keep behaviour), a performance
goal or a question to answer without changing code starts the work on the wrong foot;
`feature` plans a change too, but writes its test before the code exists. Printed per
repository: each kind's count, the reports read as a bug, and those given a kind that
does not fix code. Since every one of them is a code fix, they cannot show a classifier
that calls everything a bug: 120 requests written by hand, of every kind, each labelled
(`_written_requests.py`), give its accuracy and the requests it gets wrong. Baseline in the
same run: the same classifier without the rule that a cue the request uses as a one-word
name in code (`simplify(e)` beside "simplifies to") is the program's name, not the work.

    python benchmarks/request_kinds.py [--instances FILE ...] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections import Counter, defaultdict
from pathlib import Path
from unittest import mock

from _written_requests import WRITTEN

from nexusd.context import intent
from nexusd.context.intent import KINDS, classify_text

DATA = Path(__file__).resolve().parents[2] / "shared/eval-data/swe-lite-loc/instances.jsonl"
NOT_CODE = ("docs", "refactor", "performance", "question")


def _reports(paths: list[Path], limit: int | None) -> list[tuple[str, str, str]]:
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
            row = json.loads(line)
            out.append((row["repo"], row["instance_id"], row["problem_statement"]))
    return out


def _kinds(reports: list[tuple[str, str, str]]) -> dict[str, Counter[str]]:
    by_repo: dict[str, Counter[str]] = defaultdict(Counter)
    for repo, _id, text in reports:
        kind = classify_text(text).kind
        by_repo[repo][kind] += 1
        by_repo["all"][kind] += 1
    return by_repo


def _table(title: str, by_repo: dict[str, Counter[str]]) -> None:
    print(f"\n{title}")
    print(f"{'repository':<28}" + "".join(f"{k:>12}" for k in KINDS) + f"{'not code':>10}")
    for repo in sorted(by_repo, key=lambda r: (r == "all", r)):
        c = by_repo[repo]
        cells = "".join(f"{c[k]:>12}" for k in KINDS)
        print(f"{repo:<28}{cells}{sum(c[k] for k in NOT_CODE):>10}")


def _wrong(written: tuple[tuple[str, str], ...]) -> list[tuple[str, str, str]]:
    """(label, kind given, text) of each written request classified against its label."""
    given = ((label, classify_text(text).kind, text) for label, text in written)
    return [row for row in given if row[0] != row[1]]


def main() -> None:
    """Classify every report and print the kinds, beside the classifier without its code rule."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=Path, nargs="+", default=[DATA])
    parser.add_argument("--quick", action="store_true", help="the first 30 reports of each file")
    args = parser.parse_args()
    reports = _reports(args.instances, 30 if args.quick else None)
    ours = _kinds(reports)
    wrong = _wrong(WRITTEN)
    with mock.patch.object(intent, "_names_code", lambda cue, code: False):
        base = _kinds(reports)
        base_wrong = _wrong(WRITTEN)
    _table("nexusd (cues the report uses as code do not count)", ours)
    _table("baseline (every cue counts)", base)
    print(
        f"\nwritten requests: nexusd {len(WRITTEN) - len(wrong)} of {len(WRITTEN)} right, ", end=""
    )
    print(f"baseline {len(WRITTEN) - len(base_wrong)}; nexusd's misses:")
    for label, kind, text in wrong:
        print(f"  {label:>11} read as {kind:<11} {text[:70]!r}")
    n = len(reports)
    metrics = {
        "reports": n,
        "bug_share": round(ours["all"]["bug"] / n, 3),
        "not_code_share": round(sum(ours["all"][k] for k in NOT_CODE) / n, 3),
        "baseline_bug_share": round(base["all"]["bug"] / n, 3),
        "baseline_not_code_share": round(sum(base["all"][k] for k in NOT_CODE) / n, 3),
        "written_accuracy": round(1 - len(wrong) / len(WRITTEN), 3),
        "baseline_written_accuracy": round(1 - len(base_wrong) / len(WRITTEN), 3),
    }
    machine = {"cpus": os.cpu_count(), "python": platform.python_version()}
    print(json.dumps({"benchmark": "request_kinds", "metrics": metrics, "machine": machine}))


if __name__ == "__main__":
    main()
