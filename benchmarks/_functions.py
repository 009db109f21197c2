"""Function-level localization for `localization_offline.py --patches`: which functions,
methods or classes the gold patch changes, and where they stand among the ranked units.

A report's gold units are the innermost units of the gold file (at the base commit) that
hold a line the patch removes or changes, or that enclose lines it inserts: an insertion
counts for the innermost unit around its place whose first line is indented less than the
inserted code (lines added at the end of a method belong to the method, a method added to a
class to the class). Changes outside every unit (imports, module constants) give none.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from _commits import blobs, patch_paths
from localization import acc_at, bm25_order, bm25_tokens

from nexusd.code.corpus import Corpus
from nexusd.code.rank import FileHit
from nexusd.code.units import CodeUnit

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SYMBOLS = ("class", "function", "method")


def load_patches(path: Path, key: str = "patch") -> dict[str, str]:
    """instance_id → gold patch (or the row's `key`: `test_patch`), from SWE-bench's JSON
    list or a JSONL file of such rows."""
    text = path.read_text(encoding="utf-8")
    rows = (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(line) for line in text.splitlines() if line.strip()]
    )
    return {row["instance_id"]: row[key] for row in rows if row.get(key)}


def tests_named(
    corpus: Corpus, test_patch: str, best: Sequence[FileHit], hits: Sequence[FileHit]
) -> dict[str, Any]:
    """A report's test-step figures: the test files its real test patch changed that exist at
    the base commit, the best tests of the ranking, and the tests among the first ten files."""
    changed = [p for p in patch_paths(test_patch) if p in corpus.index]
    among = [h.path for h in hits[:10] if corpus.tests[corpus.index[h.path]]][:2]
    return {"changed": changed, "best": [h.path for h in best], "among_ten": among}


def tests_summary(rows: list[dict[str, Any]]) -> str:
    """How often a plan's test step names a test file the real fix's test patch changed."""
    found = [r["tests"] for r in rows if r.get("tests", {}).get("changed")]
    if not found:
        return "tests: no report's test patch changes a test file of its base commit"

    def hits(key: str) -> str:
        named = [t for t in found if t[key]]
        right = sum(1 for t in named if set(t[key]) & set(t["changed"]))
        return f"{right} (named for {len(named)})"

    return (
        f"tests ({len(found)} reports whose test patch changes a test file of the base "
        f"commit): the best two tests of the ranking name one in {hits('best')}; the tests "
        f"among the first ten files in {hits('among_ten')}"
    )


def hunks(patch: str, path: str) -> list[tuple[int, list[str]]]:
    """(old start line, its lines with their " ", "-" or "+" mark) of each hunk for `path`."""
    found: list[tuple[int, list[str]]] = []
    in_file, left_old, left_new = False, 0, 0
    for line in patch.splitlines():
        # Content lines start with " ", "+", "-" or a backslash: these two are always headers.
        if line.startswith("diff --git "):
            in_file, left_old, left_new = line.endswith(f" b/{path}"), 0, 0
            continue
        match = _HUNK.match(line)
        if match:
            left_old, left_new = int(match.group(2) or 1), int(match.group(4) or 1)
            if in_file:
                found.append((int(match.group(1)), []))
            continue
        if not in_file or (left_old <= 0 and left_new <= 0) or line.startswith("\\"):
            continue  # the file's `---`/`+++` lines, another file's hunks, "No newline"
        mark = line[:1] or " "
        left_old -= mark != "+"
        left_new -= mark != "-"
        found[-1][1].append(mark + line[1:])
    return found


def placed(start: int, body: list[str], lines: list[str]) -> int:
    """Where a hunk's old lines really are in `lines`: the stated start, or the nearest place
    they match exactly (a patch made against a slightly different file, as `patch` allows)."""
    old = [line[1:] for line in body if line[0] != "+"]
    if not old:
        return start
    matches = [i + 1 for i in range(len(lines) - len(old) + 1) if lines[i : i + len(old)] == old]
    return min(matches, key=lambda m: abs(m - start)) if matches else start


def changes(patch: str, path: str, lines: list[str]) -> list[tuple[int, str]]:
    """(old line, inserted text or "") for each line of `path` the patch removes (its line,
    "") and each inserted block (the old line it follows, its first non-blank line)."""
    found: list[tuple[int, str]] = []
    for start, body in hunks(patch, path):
        old, block = placed(start, body, lines), False
        for line in body:
            if line[0] == "-":
                found.append((old, ""))
                old, block = old + 1, False
            elif line[0] == "+":
                if not block and line[1:].strip():
                    found.append((old - 1, line[1:]))
                    block = True
            else:
                old, block = old + 1, False
    return found


def gold_units(units: Sequence[CodeUnit], text: str, patch: str, path: str) -> set[str]:
    """Qualified names of the units of `path` (parsed at the base commit) the patch changes."""
    lines = text.split("\n")
    symbols = sorted(
        (u for u in units if u.kind in _SYMBOLS), key=lambda u: (u.end - u.start, u.start)
    )

    def indent(s: str) -> int:
        return len(s) - len(s.lstrip())

    gold = set()
    for changed, inserted in changes(patch, path, lines):
        line = changed
        # Code inserted after blank lines continues the last unit above them, if deeper.
        while inserted and 1 < line <= len(lines) and not lines[line - 1].strip():
            line -= 1
        for u in symbols:  # innermost first
            if not u.start <= line <= u.end:
                continue
            # Inserted code no deeper than the unit's own first line lies beside it.
            if (
                inserted
                and u.start <= len(lines)
                and indent(inserted) <= indent(lines[u.start - 1])
            ):
                continue
            gold.add(u.qualname)
            break
    return gold


def accepted(units: Sequence[CodeUnit], gold: set[str]) -> set[str]:
    """The gold units and the functions or methods a gold nested function is defined in."""
    return gold | {
        u.qualname
        for u in units
        if u.kind != "class" and any(g.startswith(u.qualname + ".") for g in gold)
    }


def unit_rank(gold_path: str, gold: set[str], hits: Iterable[FileHit]) -> int:
    """1-based place of the first gold unit among the ranked files' units, in order; 0: absent."""
    place = 0
    for hit in hits:
        for unit in hit.units:
            place += 1
            if hit.path == gold_path and unit.qualname in gold:
                return place
    return 0


def in_file_rank(gold_path: str, gold: set[str], hits: Iterable[FileHit]) -> int | None:
    """Place of the first gold unit among the gold file's own listed units (0: not listed;
    None: the file is not ranked)."""
    for hit in hits:
        if hit.path == gold_path:
            return next((i + 1 for i, u in enumerate(hit.units) if u.qualname in gold), 0)
    return None


class UnitBaseline:
    """The data set's untuned BM25 (localization.bm25_order) over every class, function and
    method of a commit's `*.py` files (or the files of the report's language), each unit's
    lines as its document."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.docs: dict[str, list[tuple[str, Counter[str]]]] = {}

    def rank(
        self,
        corpus: Corpus,
        blob_of: dict[str, str],
        report: str,
        suffixes: tuple[str, ...] = (".py",),
    ) -> list[str]:
        """`path::qualname` of the units of files ending in `suffixes`, best first."""
        files = [p for p in corpus.files if p.path.endswith(suffixes) and p.path in blob_of]
        todo = sorted({blob_of[p.path] for p in files} - self.docs.keys())
        texts = dict(blobs(self.repo, todo))
        for parsed in files:
            blob = blob_of[parsed.path]
            if blob in self.docs or blob not in texts:
                continue
            lines = texts[blob].decode("utf-8", errors="replace").split("\n")
            self.docs[blob] = [
                (u.qualname, Counter(bm25_tokens("\n".join(lines[u.start - 1 : u.end]))))
                for u in parsed.units
                if u.kind in _SYMBOLS
            ]
        docs = [
            (f"{p.path}::{name}", counts)
            for p in files
            for name, counts in self.docs.get(blob_of[p.path], [])
        ]
        return bm25_order(docs, report)


def summary(rows: list[dict[str, Any]]) -> str:
    """The function-level lines: nexusd's units beside the unit BM25, over reports with gold."""
    scored = [r["functions"] for r in rows if r.get("functions", {}).get("gold")]
    if not scored:
        return "functions: no report has a gold unit (are the patches for these instances?)"
    n = len(scored)

    def acc(key: str, k: int) -> str:
        return f"{acc_at([s[key] for s in scored], k):6.3f}"

    out = [f"functions ({n} reports whose patch changes a class, function or method):"]
    out.append(f"{'':18}acc@1  acc@5 acc@10")
    out.append(f"{'nexusd units':16}{acc('rank', 1)} {acc('rank', 5)} {acc('rank', 10)}")
    if any("bm25" in s for s in scored):
        out.append(f"{'bm25 units':16}{acc('bm25', 1)} {acc('bm25', 5)} {acc('bm25', 10)}")
    inside = [s["in_file"] for s in scored if s["in_file"] is not None]
    if inside:
        first = sum(1 for i in inside if i == 1)
        listed = sum(1 for i in inside if i)
        out.append(
            f"gold file ranked in {len(inside)}: its gold unit listed first in {first}, "
            f"among its units in {listed} (up to 5 a file)"
        )
    return "\n".join(out)


def scored(
    corpus: Corpus,
    gold_path: str,
    patch: str,
    text: str,
    hits: list[FileHit],
    bm25: list[str] | None,
) -> dict[str, Any]:
    """One report's function-level row: its gold units and where nexusd and BM25 put them."""
    i = corpus.index.get(gold_path)
    units = corpus.files[i].units if i is not None else ()
    gold = gold_units(units, text, patch, gold_path)
    wanted = accepted(units, gold)
    row: dict[str, Any] = {
        "gold": sorted(gold),
        "rank": unit_rank(gold_path, wanted, hits),
        "in_file": in_file_rank(gold_path, wanted, hits),
    }
    if bm25 is not None:
        labels = {f"{gold_path}::{name}" for name in wanted}
        row["bm25"] = next((k + 1 for k, u in enumerate(bm25) if u in labels), 0)
    return row
