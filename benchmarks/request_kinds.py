"""Which kind of work requests are classified as: the plan's steps follow the kind.

Every report in `../shared/eval-data/swe-lite-loc/instances.jsonl` (110 SWE-bench Lite
problem statements, pasted whole as a user would) was fixed by a change to the code. A
plan for such a report that reads it as docs, a refactor (keep behaviour), a performance
goal or a question to answer without changing code starts the work on the wrong foot;
`feature` plans a change too, but writes its test before the code exists. Printed per
repository: each kind's count, and the reports given a kind that does not fix code.
Since every one of them is a code fix, they cannot show a classifier that calls
everything a bug: the requests of every kind written by hand and labelled in
`_written_requests.py` give its accuracy, and the ones it gets wrong are listed. Baseline
in the same run: the majority kind (`bug`) for everything.

    python benchmarks/request_kinds.py [--instances FILE ...] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections import Counter, defaultdict
from pathlib import Path

from _written_requests import WRITTEN

from nexusd.context.intent import KINDS, classify_text

DATA = Path(__file__).resolve().parents[2] / "shared/eval-data/swe-lite-loc/instances.jsonl"
NOT_CODE = ("docs", "refactor", "performance", "question")


def _reports(paths: list[Path], limit: int | None) -> list[tuple[str, str]]:
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
            row = json.loads(line)
            out.append((row["repo"], row["problem_statement"]))
    return out


def _table(reports: list[tuple[str, str]]) -> Counter[str]:
    """Print each repository's kinds; return the kinds of all the reports."""
    by_repo: dict[str, Counter[str]] = defaultdict(Counter)
    for repo, text in reports:
        kind = classify_text(text).kind
        by_repo[repo][kind] += 1
        by_repo["all"][kind] += 1
    print(f"{'repository':<28}" + "".join(f"{k:>12}" for k in KINDS) + f"{'not code':>10}")
    for repo in sorted(by_repo, key=lambda r: (r == "all", r)):
        c = by_repo[repo]
        cells = "".join(f"{c[k]:>12}" for k in KINDS)
        print(f"{repo:<28}{cells}{sum(c[k] for k in NOT_CODE):>10}")
    return by_repo["all"]


def main() -> None:
    """Classify the reports and the written requests; print both beside the baseline."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=Path, nargs="+", default=[DATA])
    parser.add_argument("--quick", action="store_true", help="the first 30 reports of each file")
    args = parser.parse_args()
    reports = _reports(args.instances, 30 if args.quick else None)
    print("real bug reports, every one fixed in code (baseline: all read as bugs)")
    kinds = _table(reports)
    wrong = [(label, classify_text(text).kind, text) for label, text in WRITTEN]
    wrong = [row for row in wrong if row[0] != row[1]]
    right, base = len(WRITTEN) - len(wrong), sum(label == "bug" for label, _ in WRITTEN)
    print(f"\nwritten requests: {right} of {len(WRITTEN)} right (baseline, all bugs: {base})")
    for label, kind, text in wrong:
        print(f"  {label:>11} read as {kind:<11} {text[:70]!r}")
    n = len(reports)
    metrics = {
        "reports": n,
        "bug_share": round(kinds["bug"] / n, 3),
        "not_code_share": round(sum(kinds[k] for k in NOT_CODE) / n, 3),
        "written": len(WRITTEN),
        "written_accuracy": round(right / len(WRITTEN), 3),
        "baseline_written_accuracy": round(base / len(WRITTEN), 3),
    }
    machine = {"cpus": os.cpu_count(), "python": platform.python_version()}
    print(json.dumps({"benchmark": "request_kinds", "metrics": metrics, "machine": machine}))


if __name__ == "__main__":
    main()
