"""File localization scored offline: the index's own parser, corpus and ranker, no pipeline.

The same 110 reports as `localization.py`, but each base commit's blobs are read straight
from the clones (`git ls-tree`, `git cat-file --batch`) and parsed once per (path, blob) into
a cache kept under --cache, so a whole run after the first takes a few minutes instead of
twenty: the tool for trying a ranking change on every report before a full end-to-end run.
It ranks exactly as the daemon does (the request parsed as a free-form request, the query
mined from `query_text`, `rank` with the default weights and `code.max_results`), and
`localization.py` confirms a change end to end.

    python benchmarks/localization_offline.py --repos /work/.mirror
    python benchmarks/localization_offline.py --repos /work/.mirror --save ranks.json
    python benchmarks/localization_offline.py --repos /work/.mirror --against ranks.json
    python benchmarks/localization_offline.py --repos DIR --instances other.jsonl --baseline
    python benchmarks/localization_offline.py --repos DIR --baseline --patches swe-bench-lite.json

`--against` prints every report whose rank moved since a saved run; `--baseline` adds the
data set's untuned BM25 (as `localization.py` computes it) beside nexusd's figures, for
reports of other repositories in the same format (held-out checks). A report with a
`repo_dir` (absolute, or relative to the instances file) is ranked in that clone instead of
one under `--repos` (held-out sets made from release sdists, one clone per release).

`--reproduce PYTHON` runs each report's code as `code.reproduce` does (the tracer, in the
sandbox, on `git archive` of the base commit) with an interpreter that can import the
repositories, and ranks with the files it entered; `--ro-bind DIR` lets bwrap see that
interpreter's environment (`benchmarks/reproduce_env.sh` builds the one used). It
prints, beside the figures, how many reports had code, how many ran it into repository
files, and how often the gold file was among them.

`--patches FILE` (SWE-bench rows with their gold `patch`, a JSON list or JSONL) also scores
functions: the classes, functions and methods the gold patch changes in the gold file
(`_functions.py`) are looked for among the units the ranked files list, in order, beside a
BM25 over every unit of the commit when `--baseline` is given. Rows that carry a
`test_patch` also score a plan's test step: whether the best two tests of the ranking, and
the tests among the first ten files, name a test file the real fix's tests changed.

`--as-search` ranks each report as `nexusd code search` (and the MCP tool) does when the
report is pasted into it: its raw text, its first line past a template's markup the title,
its code not run.

`--first-line TEXT` puts TEXT and a blank line before every report, as a person or an
agent writes before pasting one (`Bug report`, `Please investigate the issue below.`): how
much the ranking depends on the report's first line being its title.

`--unit-embeddings WEIGHT` also ranks each report with the packaged MiniLM's embeddings of
its units added as the `semantic` signal (`_unit_vectors.py`; vectors cached under --cache)
and prints the figures beside the shipped ranking's: not shipped, a harness for a code
embedder (benchmarks/README.md, sixteenth session).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _blob_cache import CONFIG, fill_cache, selected  # noqa: E402
from _commits import blobs, tree  # noqa: E402
from _functions import (  # noqa: E402
    UnitBaseline,
    load_patches,
    scored,
    summary,
    tests_named,
    tests_summary,
)
from _loc_table import figures, report  # noqa: E402
from _report_run import ran_files, reproduce_config  # noqa: E402
from localization import (  # noqa: E402
    DATA,
    bm25_order,
    bm25_tokens,
    rank_of,
    source_for,
)

from nexusd.code.boilerplate import search_title  # noqa: E402
from nexusd.code.corpus import Corpus, TokenCache  # noqa: E402
from nexusd.code.query import mine  # noqa: E402
from nexusd.code.rank import TESTS_NAMED, executed_signal, rank, ranking  # noqa: E402
from nexusd.code.reader import Counted  # noqa: E402
from nexusd.code.store import PARSER_VERSION  # noqa: E402
from nexusd.code.weights import Weights  # noqa: E402
from nexusd.context.relevant_code import query_text  # noqa: E402
from nexusd.protocol.parse import parse_request  # noqa: E402

# A report's `language` (Multi-SWE-bench's categories) → the files its baseline ranks.
BASELINE_SUFFIXES = {
    "python": (".py",),
    "c": (".c", ".h"),
    "cpp": (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".ipp", ".inl"),
    "go": (".go",),
    "java": (".java",),
    "js": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
    "ts": (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"),
    "rust": (".rs",),
    "php": (".php",),
    "ruby": (".rb", ".rake"),
}


class Baseline:
    """The data set's untuned BM25 (localization.bm25_rank) over a commit's `*.py` blobs (or
    the source files of the report's `language`), each blob tokenized once per run."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.docs: dict[str, Counter[str]] = {}

    def rank(self, commit: str, report: str, language: str = "python") -> list[str]:
        """Paths best first, as localization.bm25_rank orders them."""
        suffixes = BASELINE_SUFFIXES[language]
        files = [
            (path, blob) for path, blob, _ in tree(self.repo, commit) if path.endswith(suffixes)
        ]
        todo = sorted({blob for _, blob in files if blob not in self.docs})
        paths = {blob: path for path, blob in files}
        for blob, data in blobs(self.repo, todo):
            text = data.decode("utf-8", errors="replace")
            self.docs[blob] = Counter(bm25_tokens(paths[blob].replace("/", " ") + " " + text))
        # A blob the clone lacks (a partial mirror) is an empty document, as the index has it.
        empty = Counter[str]()
        return bm25_order([(path, self.docs.get(blob, empty)) for path, blob in files], report)


def request_query(report: str) -> tuple[str, str]:
    """(text, title) as the pipeline searches for a free-form request of `report`."""
    request = parse_request(report, ".scratchpad_logs/x_plan_request.md")
    return query_text(request)


@dataclass(frozen=True)
class Options:
    """What a run does beside the shipped ranking."""

    cache_dir: Path
    baseline: bool = False  # the data set's BM25 beside (of units too, with `patches`)
    reproduce: Any = None  # the configuration that runs the reports' code
    vectors: Any = None  # _unit_vectors.UnitVectors: also rank with unit embeddings ...
    emb_weight: float = 0.0  # ... at this weight, as the row's `emb`
    patches: dict[str, str] | None = None  # instance → gold patch: the row's `functions`
    test_patches: dict[str, str] | None = None  # instance → its test patch: the row's `tests`
    as_search: bool = False  # the report pasted into `code search`, not dropped as a request


def run_repo(
    name: str, items: list[dict[str, Any]], repo: Path, opts: Options
) -> list[dict[str, Any]]:
    """Rank every instance of one repository; one row per instance."""
    # Parsed by this version of the parser: a cache of another would give its old tokens.
    store = opts.cache_dir / f"{name.replace('/', '+')}-p{PARSER_VERSION.decode()}.pickle"
    cache: dict[tuple[str, str], Counted] = {}
    if store.exists():
        cache = pickle.loads(store.read_bytes())
    started = time.perf_counter()
    added = fill_cache(repo, items, cache)
    if added:
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_bytes(pickle.dumps(cache, protocol=pickle.HIGHEST_PROTOCOL))
        print(
            f"{name}: parsed {added} blobs in {time.perf_counter() - started:.0f}s", file=sys.stderr
        )
    tokens = TokenCache()
    bm25 = Baseline(repo) if opts.baseline else None
    unit_bm25 = UnitBaseline(repo) if opts.baseline and opts.patches else None
    rows = []
    for item in items:
        files, blob_of = [], {}
        chosen = selected(repo, item["base_commit"])
        for path, (blob, _language) in chosen.wanted.items():
            parsed, terms = cache[(path, blob)]
            tokens.arrays(parsed, terms)
            files.append(parsed)
            blob_of[path] = blob
        corpus = Corpus(files, tokens, chosen.generated)
        if opts.as_search:
            text = item["problem_statement"]
            title = search_title(text)  # as `code search` titles a query (code/ops.py)
        else:
            text, title = request_query(item["problem_statement"])
        gold = item["gold_files"][0]
        extra: dict[str, Any] = {}
        signal: tuple[dict[str, Any], dict[str, dict[int, str]]] = ({}, {})
        ran: dict[str, Any] | None = None
        if opts.reproduce is not None:
            ran = ran_files(repo, item["base_commit"], text, opts.reproduce, corpus)
            if ran is not None:
                signal = executed_signal(corpus, ran["files"], ran.get("recursion"))
                extra["ran"] = {"files": len(ran["files"]), "gold": gold in ran["files"]}
                for key in ("unexported", "missing"):
                    if key in ran:
                        extra["ran"][key] = ran[key]
        query = mine(text, title=title)
        found = ranking(
            corpus,
            query,
            k=CONFIG.code.max_results,
            tests=TESTS_NAMED,
            extra=signal[0],
            why=signal[1],
            ran_lines=(ran or {}).get("lines"),
            recursion=(ran or {}).get("recursion"),
        )
        hits = list(found.files)
        test_patch = (opts.test_patches or {}).get(item["instance_id"])
        if test_patch is not None:
            extra["tests"] = tests_named(corpus, test_patch, found.tests, hits)
        ranked = [h.path for h in hits]
        if bm25 is not None:
            theirs = bm25.rank(
                item["base_commit"], item["problem_statement"], item.get("language", "python")
            )
            extra["bm25"] = rank_of(gold, theirs)
        if opts.vectors is not None:
            semantic = opts.vectors.scores(corpus, f"{title}\n{text}")
            weights = replace(Weights(), semantic=opts.emb_weight)
            with_emb = rank(
                corpus,
                query,
                k=CONFIG.code.max_results,
                weights=weights,
                extra={**signal[0], "semantic": semantic},
            )
            extra["emb"] = rank_of(gold, [h.path for h in with_emb])
        patch = (opts.patches or {}).get(item["instance_id"])
        if patch is not None and gold in blob_of:
            source = b"".join(data for _, data in blobs(repo, [blob_of[gold]]))
            units = (
                unit_bm25.rank(
                    corpus,
                    blob_of,
                    item["problem_statement"],
                    BASELINE_SUFFIXES[item.get("language", "python")],
                )
                if unit_bm25
                else None
            )
            extra["functions"] = scored(
                corpus, gold, patch, source.decode("utf-8", "replace"), hits, units
            )
        rows.append(
            {
                "id": item["instance_id"],
                "repo": name,
                "gold": gold,
                "rank": rank_of(gold, ranked),
                "top": ranked[:5],
                **extra,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of local clones")
    parser.add_argument("--instances", type=Path, default=DATA)
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "nexusd-bench" / "loc"
    )
    parser.add_argument("--only", default=None, help="one repository, e.g. pytest-dev/pytest")
    parser.add_argument("--save", type=Path, default=None, help="write the ranks as JSON")
    parser.add_argument("--against", type=Path, default=None, help="a saved run to compare with")
    parser.add_argument(
        "--baseline", action="store_true", help="also rank by the data set's untuned BM25"
    )
    parser.add_argument(
        "--reproduce", default=None, metavar="PYTHON", help="run the reports' code with it"
    )
    parser.add_argument(
        "--ro-bind", action="append", default=[], help="a folder bwrap mounts (repeatable)"
    )
    parser.add_argument(
        "--unit-embeddings",
        type=float,
        default=None,
        metavar="WEIGHT",
        help="also rank with MiniLM unit embeddings at this weight (benchmarks/_unit_vectors.py)",
    )
    parser.add_argument(
        "--patches",
        type=Path,
        default=None,
        help="SWE-bench rows with each instance's gold patch (JSON list or JSONL): also score "
        "the classes, functions and methods it changes among the ranked units",
    )
    parser.add_argument(
        "--as-search",
        action="store_true",
        help="rank each report as `code search` does given it pasted (its raw text, its first "
        "line the title) instead of as a plan's request",
    )
    parser.add_argument(
        "--first-line",
        default=None,
        metavar="TEXT",
        help="put TEXT and a blank line before every report (e.g. 'Bug report')",
    )
    args = parser.parse_args()
    if args.as_search and args.reproduce:
        parser.error("--as-search ranks as `code search` does, which runs no code: no --reproduce")
    if args.patches is not None and not args.patches.is_file():
        parser.error(f"--patches {args.patches}: no such file (SWE-bench rows with `patch`)")
    if args.unit_embeddings is not None and args.unit_embeddings <= 0:
        parser.error("--unit-embeddings takes a weight above 0, e.g. 1.0")
    if not args.instances.is_file():
        parser.error(f"no instances file at {args.instances}: pass --instances FILE")
    vectors = None
    if args.unit_embeddings is not None:
        from _unit_vectors import UnitVectors

        args.cache.mkdir(parents=True, exist_ok=True)
        vectors = UnitVectors(args.cache / "unit-vectors.pickle")
    opts = Options(
        cache_dir=args.cache,
        baseline=args.baseline,
        reproduce=reproduce_config(args.reproduce, args.ro_bind) if args.reproduce else None,
        vectors=vectors,
        emb_weight=args.unit_embeddings or 0.0,
        patches=load_patches(args.patches) if args.patches else None,
        test_patches=load_patches(args.patches, "test_patch") if args.patches else None,
        as_search=args.as_search,
    )
    items = [json.loads(line) for line in args.instances.read_text().splitlines() if line]
    if args.first_line is not None:
        for item in items:
            item["problem_statement"] = f"{args.first_line}\n\n{item['problem_statement']}"
    by_repo: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        if args.only in (None, item["repo"]):
            by_repo[(item["repo"], item.get("repo_dir", ""))].append(item)
    rows = []
    for (name, repo_dir), group in sorted(by_repo.items()):
        # A report may name its own clone (`repo_dir`): held-out sets made from release
        # sdists keep one repository per release.
        repo = args.instances.parent / repo_dir if repo_dir else source_for(args.repos, name)
        rows += run_repo(name, group, repo, opts)
    report(rows, json.loads(args.against.read_text()) if args.against else None)
    if opts.patches is not None:
        print(summary(rows))
        print(tests_summary(rows))
    if vectors is not None:
        vectors.save()
        embedded = [row["emb"] for row in rows]
        print(
            f"with unit embeddings at {args.unit_embeddings}: {figures(embedded)} (all "
            f"{len(embedded)}; acc@1 acc@3 acc@5 acc@10 mrr); {vectors.encoded} units embedded "
            f"in {vectors.encode_s:.0f}s"
        )
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
