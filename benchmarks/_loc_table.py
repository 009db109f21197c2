"""The table `localization_offline.py` prints: Acc@1/3/5/10 and MRR per repository and
overall, beside the baseline's, and what moved against a saved run."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from localization import acc_at, scores


def figures(ranks: list[int]) -> str:
    """Acc@1, @3, @5, @10 and MRR of `ranks`, as the table's cells."""
    got = scores(ranks)
    values = (got["acc@1"], got["acc@3"], got["acc@5"], acc_at(ranks, 10), got["mrr"])
    return " ".join(f"{v:>6.3f}" for v in values)


def report(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None) -> None:
    """Acc@1/3/5 and MRR per repository and overall; what moved against `before`."""
    groups: dict[str, list[int]] = defaultdict(list)
    base: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        groups[row["repo"]].append(row["rank"])
        groups["all"].append(row["rank"])
        if "bm25" in row:
            base[row["repo"]].append(row["bm25"])
            base["all"].append(row["bm25"])
    heads = ("acc@1", "acc@3", "acc@5", "acc@10", "mrr")
    line = f"{'repository':<26} {'n':>4} " + " ".join(f"{h:>6}" for h in heads)
    print(line + (" | bm25 " + " ".join(f"{h:>6}" for h in heads) if base else ""))
    for name in sorted(groups, key=lambda n: (n == "all", n)):
        cells = [f"{name:<26} {len(groups[name]):>4}", figures(groups[name])]
        if base:
            cells.append("|      " + figures(base[name]))
        print(" ".join(cells))
    tried = [row["ran"] for row in rows if "ran" in row]
    if tried:
        entered = [t for t in tried if t["files"]]
        unexported = sum(1 for t in tried if "unexported" in t)
        partial = sum(1 for t in tried if "missing" in t)
        print(
            f"reproduced: {len(tried)} reports show code, {len(entered)} entered repository "
            f"files, the gold file among them in {sum(t['gold'] for t in entered)}"
            + (f"; {partial} run without blobs the clone lacks" if partial else "")
            + (f"; {unexported} not run (git archive failed)" if unexported else "")
        )
    if before is None:
        return
    old = {row["id"]: row["rank"] for row in before}
    moved = [
        (row["id"], old.get(row["id"], 0), row["rank"])
        for row in rows
        if old.get(row["id"], 0) != row["rank"]
    ]
    better = sum(1 for _, a, b in moved if b and (not a or b < a))
    print(f"moved: {len(moved)} ({better} better, {len(moved) - better} worse)")
    for iid, a, b in moved:
        print(f"  {iid:<32} {a or '-':>2} -> {b or '-':>2}")
