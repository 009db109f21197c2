"""Rebuild the held-out localization sets of benchmarks/README.md from their public sources.

The sets nexusd's ranking is checked on beside the 110 of `swe-lite-loc` (nothing was tuned
on them) are made from SWE-bench Lite's rows with their gold patches, as `swe-lite-loc` is
(gold = the `diff --git a/X` paths of the patch, tests excluded by the data set already):

- `small`: the "small 52", the reports of eleven repositories small enough to fetch at their
  base commits (the test split's astropy, flask, pylint, requests, seaborn, xarray; the dev
  split's sqlfluff, pvlib, astroid, pydicom, marshmallow).
- `reverted`: the 106 of django, matplotlib, scikit-learn and pyvista, too large to fetch
  here, ranked in a git clone of the PyPI release sdist of each report's `version` (the
  newest release of that series, `VERSIONS`). Where the gold patch applies only in reverse,
  it is reversed in a commit of its own (the code as before the fix); where it applies only
  forward, the release is the report's base; otherwise (neither way, or both ways: the
  patch says nothing about the release's side) the report is left out. Each row's
  `repo_dir` names its clone, relative to the output folder.

    python benchmarks/heldout_sets.py small --lite swe-bench-lite.json \
        --dev swe_bench_lite_dev.csv --out DIR
    python benchmarks/heldout_sets.py reverted --lite swe-bench-lite.json \
        --dev swe_bench_lite_dev.csv --sdists SDISTS --out DIR

`--lite` is the Lite test split as a JSON list (`swe-bench-lite.json` of
github.com/ivan4722/csvtransfer, whose 110 rows of sympy, sphinx and pytest equal
`swe-lite-loc` field for field); `--dev` that repository's `swe_bench_lite_dev.csv` (read
with `newline=''`: 166 rows' text changes otherwise). `--sdists` holds the tarballs of
`VERSIONS`, from `pip download --no-deps --no-binary PKG "PKG==X"` (old scikit-learn needs
`--no-build-isolation` with setuptools < 60). Each writes `<set>.jsonl` and
`<set>_patches.jsonl` under `--out`; `localization_offline.py --instances DIR/<set>.jsonl
--patches DIR/<set>_patches.jsonl --baseline` ranks them. The twenty-fourth session's
rebuild reproduced every recorded figure of both sets.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any

from _commits import patch_paths

SMALL_TEST = {"astropy/astropy", "pallets/flask", "pylint-dev/pylint", "psf/requests",
              "mwaskom/seaborn", "pydata/xarray"}  # fmt: skip
SMALL_DEV = {"sqlfluff/sqlfluff", "pvlib/pvlib-python", "pylint-dev/astroid",
             "pydicom/pydicom", "marshmallow-code/marshmallow"}  # fmt: skip
# The release sdist standing for each version series (its newest release).
VERSIONS: dict[str, dict[str, str]] = {
    "django/django": {"3.0": "Django-3.0.14.tar.gz", "3.1": "Django-3.1.14.tar.gz",
                      "3.2": "Django-3.2.25.tar.gz", "4.0": "Django-4.0.10.tar.gz",
                      "4.1": "Django-4.1.13.tar.gz", "4.2": "django-4.2.30.tar.gz",
                      "5.0": "Django-5.0.14.tar.gz"},
    "matplotlib/matplotlib": {"3.3": "matplotlib-3.3.4.tar.gz", "3.5": "matplotlib-3.5.3.tar.gz",
                              "3.6": "matplotlib-3.6.3.tar.gz", "3.7": "matplotlib-3.7.5.tar.gz"},
    "scikit-learn/scikit-learn": {"0.20": "scikit-learn-0.20.4.tar.gz",
                                  "0.21": "scikit-learn-0.21.3.tar.gz",
                                  "0.22": "scikit-learn-0.22.2.post1.tar.gz",
                                  "1.3": "scikit-learn-1.3.2.tar.gz"},
    "pyvista/pyvista": {"0.39": "pyvista-0.39.1.tar.gz"},
}  # fmt: skip
# Fixed identity and dates: the clones' commit ids are the same on every machine.
_ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="sdist", GIT_AUTHOR_EMAIL="sdist@localhost",
    GIT_COMMITTER_NAME="sdist", GIT_COMMITTER_EMAIL="sdist@localhost",
    GIT_AUTHOR_DATE="2000-01-01T00:00:00Z", GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
)  # fmt: skip


def splits(lite: Path, dev: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """SWE-bench Lite's test rows and its dev rows."""
    csv.field_size_limit(sys.maxsize)
    with dev.open(newline="", encoding="utf-8") as fh:
        return json.loads(lite.read_text(encoding="utf-8")), list(csv.DictReader(fh))


def instance(row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A row in `swe-lite-loc`'s format."""
    gold = patch_paths(row["patch"])
    keys = ("instance_id", "repo", "base_commit", "problem_statement")
    return {**{k: row[k] for k in keys}, "gold_files": gold, **extra}


def _git(repo: Path, *args: str, data: str | None = None, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=data, capture_output=True, text=True, env=_ENV, check=check,
    )  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 else ""


def _applies(clone: Path, patch: str, *flags: str) -> bool:
    """Whether `patch` applies to the clone's checkout (in reverse with `-R`)."""
    args = ["git", "-C", str(clone), "apply", "--check", *flags]
    return (
        subprocess.run(args, input=patch, text=True, capture_output=True, check=False).returncode
        == 0
    )


def clone_of(tarball: Path, into: Path) -> str:
    """A git repository holding the sdist's files in one commit (tag `release`); its id."""
    if (into / ".git").exists():
        return _git(into, "rev-parse", "refs/tags/release")
    part = into.with_name(into.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(part, filter="data")  # owners dropped: git refuses a tree it does not own
    (top,) = list(part.iterdir())
    shutil.rmtree(into, ignore_errors=True)
    top.rename(into)
    part.rmdir()
    _git(into, "init", "-q")
    _git(into, "add", "-A", "-f", ".")
    _git(into, "commit", "-q", "-m", f"release sdist {tarball.name}")
    _git(into, "tag", "release")
    return _git(into, "rev-parse", "HEAD")


def reverted(all_rows: list[dict[str, Any]], sdists: Path, out: Path) -> list[dict[str, Any]]:
    """The reports of `VERSIONS`' repositories whose gold patch applies one way only."""
    kept, counts = [], Counter[tuple[str, str]]()
    for row in sorted(
        (r for r in all_rows if r["repo"] in VERSIONS), key=lambda r: r["instance_id"]
    ):
        tarball = sdists / VERSIONS[row["repo"]][row["version"]]
        where = Path("reverted_repos") / tarball.name.removesuffix(".tar.gz")
        clone = out / where
        release = clone_of(tarball, clone)
        _git(clone, "checkout", "-q", "--detach", release)
        patch = row["patch"]
        back, ahead = _applies(clone, patch, "-R"), _applies(clone, patch)
        how = "both" if back and ahead else "reverse" if back else "forward" if ahead else "neither"
        counts[(row["repo"], how)] += 1
        if how in ("both", "neither"):
            continue
        base = release
        if how == "reverse":
            _git(clone, "apply", "-R", data=patch)
            _git(clone, "add", "-A", "-f", ".")
            _git(clone, "commit", "-q", "-m", f"{row['instance_id']}: gold patch reversed")
            base = _git(clone, "rev-parse", "HEAD")
            _git(clone, "update-ref", f"refs/heads/{row['instance_id']}", base)
            _git(clone, "checkout", "-q", "--detach", release)
        kept.append(instance({**row, "base_commit": base}, repo_dir=str(where), applies=how))
    for (repo, how), n in sorted(counts.items()):
        print(f"{repo}: {how} {n}", file=sys.stderr)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("set", choices=("small", "reverted"))
    parser.add_argument("--lite", type=Path, required=True, help="swe-bench-lite.json")
    parser.add_argument("--dev", type=Path, required=True, help="swe_bench_lite_dev.csv")
    parser.add_argument("--sdists", type=Path, help="folder of VERSIONS' tarballs (reverted)")
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    args = parser.parse_args()
    test, dev = splits(args.lite, args.dev)
    everything = test + dev
    args.out.mkdir(parents=True, exist_ok=True)
    if args.set == "small":
        chosen = [r for r in test if r["repo"] in SMALL_TEST]
        chosen += [r for r in dev if r["repo"] in SMALL_DEV]
        made = [instance(r) for r in sorted(chosen, key=lambda r: r["instance_id"])]
    else:
        if args.sdists is None:
            parser.error("reverted needs --sdists")
        made = reverted(everything, args.sdists, args.out)
    patches = {r["instance_id"]: r["patch"] for r in everything}
    with (args.out / f"{args.set}.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in made)
    with (args.out / f"{args.set}_patches.jsonl").open("w", encoding="utf-8") as fh:
        for r in made:
            row = {"instance_id": r["instance_id"], "patch": patches[r["instance_id"]]}
            fh.write(json.dumps(row) + "\n")
    print(f"{len(made)} reports: {dict(Counter(r['repo'] for r in made))}", file=sys.stderr)


if __name__ == "__main__":
    main()
