"""Checkpoint cost vs `git stash create` on generated repositories, and disk growth.

    python benchmarks/checkpoint.py [--quick]

For each repository size (1k, 10k, 50k files; `--quick`: 1k and 10k) a few files
are changed before every sample; `git stash create` and `create_checkpoint` run
interleaved (A B, then B A) on the same tree. Reports median, p99, max and the
ratio of medians (goal ≤ 1.2), plus bytes added to .git/objects per checkpoint, and on the
1k repository (and 20k without --quick; `--cli-files`) what the `nexusd checkpoint create`
command costs beyond `nexusd --version`, beside `git stash create`, run with bytecode as an
installed copy has it; `--before DIR` measures another checkout's CLI interleaved with this
one's. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nexusd.checkpoint.snapshot import MAX_UNTRACKED_BYTES, create_checkpoint
from nexusd.paths import find_repo

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, env=ENV, check=True, capture_output=True, text=True
    ).stdout


def make_repo(base: Path, files: int) -> Path:
    root = base / f"repo{files}"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        d = root / f"pkg{i // 1000:03d}" / f"mod{(i // 50) % 20:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i:06d}.py").write_text(f"# file {i}\n" + "x = 1\n" * (i % 40), "utf-8")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "config", "gc.auto", "0")  # no background auto-gc racing the measurements
    git(root, "add", "-A")
    git(root, "commit", "-qm", "generated")
    git(root, "gc", "-q")
    time.sleep(1.1)  # files older than the index: no racily-clean entries, like a real repo
    git(root, "status", "--porcelain")
    return root


def du(path: Path) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            total += (Path(dirpath) / name).lstat().st_blocks * 512
    return total


def size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            total += (Path(dirpath) / name).lstat().st_size
    return total


def change_a_few(root: Path, n: int, files: int) -> None:
    for k in range(5):
        i = (n * 7919 + k * 104729) % files
        target = root / f"pkg{i // 1000:03d}" / f"mod{(i // 50) % 20:02d}" / f"file{i:06d}.py"
        target.write_text(f"# changed in sample {n}\n", "utf-8")
    (root / f"untracked{n % 3}.txt").write_text(f"sample {n}\n", "utf-8")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench(root: Path, files: int, samples: int, limit: int) -> dict[str, float]:
    layout = find_repo(root)
    stash: list[float] = []
    ours: list[float] = []

    def time_stash() -> float:
        t = time.perf_counter()
        git(root, "stash", "create")
        return time.perf_counter() - t

    def time_ours() -> float:
        t = time.perf_counter()
        create_checkpoint(layout, reason="request", max_untracked_bytes=limit)
        return time.perf_counter() - t

    for n in range(2):  # warm-up
        change_a_few(root, n, files)
        time_stash()
        time_ours()
    for n in range(samples):
        change_a_few(root, 100 + n, files)
        if n % 2:
            stash.append(time_stash())
            ours.append(time_ours())
        else:
            ours.append(time_ours())
            stash.append(time_stash())
    objects = root / ".git" / "objects"
    growth: list[int] = []
    apparent: list[int] = []
    for n in range(3):
        change_a_few(root, 500 + n, files)  # 5 modified files + 1 untracked file
        before, before_size = du(objects), size(objects)
        create_checkpoint(layout, reason="request", max_untracked_bytes=limit)
        growth.append(du(objects) - before)
        apparent.append(size(objects) - before_size)
    return {
        "files": files,
        "checkpoint_ms_median": statistics.median(ours) * 1000,
        "checkpoint_ms_p99": pct(ours, 0.99) * 1000,
        "checkpoint_ms_max": max(ours) * 1000,
        "stash_create_ms_median": statistics.median(stash) * 1000,
        "ratio": statistics.median(ours) / statistics.median(stash),
        "disk_bytes_per_checkpoint": statistics.median(growth),
        "object_bytes_per_checkpoint": statistics.median(apparent),
        "samples": len(ours),
    }


def cli_env(code: Path, tmp: Path) -> dict[str, str]:
    """The environment of a `nexusd` run from `code`, with bytecode as a pip install has it.

    Without it (PYTHONDONTWRITEBYTECODE set, no __pycache__) every run compiles nexusd's
    modules again: ~20 ms that no installed copy pays. The bytecode goes under `tmp`.
    """
    env = {**ENV, "PYTHONPATH": str(code)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / ("pyc-" + str(code).strip("/").replace("/", "_")))
    return env


def cli_cost(
    root: Path, files: int, samples: int, codes: dict[str, Path], tmp: Path
) -> dict[str, float]:
    """`nexusd checkpoint create` minus `nexusd --version` (start-up), beside `git stash
    create`, for each checkout in `codes` (label -> folder holding `nexusd/`), interleaved."""
    envs = {label: cli_env(code, tmp) for label, code in codes.items()}
    cmd = [sys.executable, "-P", "-m", "nexusd"]
    times: dict[str, list[float]] = {"stash": []}
    for label in codes:
        times[f"{label} version"], times[f"{label} create"] = [], []

    def run(argv: list[str], env: dict[str, str]) -> float:
        t = time.perf_counter()
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
        return time.perf_counter() - t

    for n in range(-2, samples):  # two rounds of warm-up (they write the bytecode)
        change_a_few(root, 900 + n, files)
        order = list(codes.items()) if n % 2 else list(reversed(codes.items()))
        took = {"stash": run(["git", "stash", "create"], ENV)}
        for label, _code in order:
            took[f"{label} version"] = run([*cmd, "--version"], envs[label])
            took[f"{label} create"] = run([*cmd, "checkpoint", "create"], envs[label])
        if n >= 0:
            for key, value in took.items():
                times[key].append(value)
    med = {key: statistics.median(values) * 1000 for key, values in times.items()}
    out: dict[str, float] = {"files": files, "samples": samples, "stash_ms": med["stash"]}
    for label in codes:
        beyond = med[f"{label} create"] - med[f"{label} version"]
        out[f"{label}_version_ms"] = med[f"{label} version"]
        out[f"{label}_create_ms"] = med[f"{label} create"]
        out[f"{label}_beyond_version_ms"] = beyond
        out[f"{label}_beyond_version_vs_stash"] = beyond / med["stash"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k files, fewer samples")
    parser.add_argument(
        "--max-untracked-bytes",
        type=int,
        default=MAX_UNTRACKED_BYTES,
        help="checkpoint.max_untracked_file_bytes (0: no size check, one git call fewer)",
    )
    parser.add_argument(
        "--cli-files",
        default=None,
        help="repository sizes for the CLI figure, e.g. 1000,20000 (default: 1000; 1000,20000"
        " without --quick)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="another checkout (a folder holding nexusd/, e.g. from `git archive`): its CLI is"
        " measured interleaved with this one's, as `before`",
    )
    opts = parser.parse_args()
    sizes = [1000, 10_000] if opts.quick else [1000, 10_000, 50_000]
    cli_sizes = [
        int(n) for n in (opts.cli_files or ("1000" if opts.quick else "1000,20000")).split(",")
    ]
    codes = {"now": Path(__file__).resolve().parents[1]}
    if opts.before is not None:
        codes = {"before": opts.before.resolve(), **codes}
    # Small repositories are cheap to sample: more samples there steady a noisy shared machine.
    per_size = {1000: 21, 10_000: 9} if opts.quick else {1000: 31, 10_000: 15, 50_000: 9}
    rows = []
    clis = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GIT_CONFIG_GLOBAL"] = str(Path(tmp) / "gitconfig")
        ENV["GIT_CONFIG_GLOBAL"] = os.environ["GIT_CONFIG_GLOBAL"]
        for files in sorted(set(sizes) | set(cli_sizes)):
            root = make_repo(Path(tmp), files)
            if files in sizes:
                rows.append(bench(root, files, per_size[files], opts.max_untracked_bytes))
            if files in cli_sizes:
                samples = per_size.get(files, 9)
                clis.append(cli_cost(root, files, samples, codes, Path(tmp)))
    print(
        f"{'files':>7} {'ours med':>9} {'p99':>8} {'max':>8}"
        f" {'stash med':>10} {'ratio':>6} {'disk/cp':>9}"
    )
    for r in rows:
        print(
            f"{r['files']:>7} {r['checkpoint_ms_median']:>8.1f}ms {r['checkpoint_ms_p99']:>6.1f}ms"
            f" {r['checkpoint_ms_max']:>6.1f}ms {r['stash_create_ms_median']:>8.1f}ms"
            f" {r['ratio']:>6.2f} {r['disk_bytes_per_checkpoint']:>8.0f}B"
            f" ({r['object_bytes_per_checkpoint']:.0f}B in objects)"
        )
    library = {int(r["files"]): r["checkpoint_ms_median"] for r in rows}
    metrics: dict[str, float] = {}
    for cli in clis:
        files = int(cli["files"])
        lib = f", library call {library[files]:.1f} ms" if files in library else ""
        print(
            f"CLI ({files} files, {cli['samples']} samples):"
            f" git stash create {cli['stash_ms']:.1f} ms{lib}"
        )
        for label in codes:
            print(
                f"  {label:>6}: `nexusd --version` {cli[f'{label}_version_ms']:.1f} ms,"
                f" `nexusd checkpoint create` {cli[f'{label}_create_ms']:.1f} ms:"
                f" {cli[f'{label}_beyond_version_ms']:.1f} ms beyond start-up"
                f" ({cli[f'{label}_beyond_version_vs_stash']:.2f}x git stash create)"
            )
        tag = f"{files // 1000}k"
        for key, value in cli.items():
            if key not in ("files", "samples"):
                metrics[f"cli_{key}_{tag}"] = round(value, 3 if key.endswith("stash") else 1)
    for r in rows:
        tag = f"{int(r['files']) // 1000}k"
        metrics[f"ratio_vs_stash_create_{tag}"] = round(r["ratio"], 3)
        metrics[f"checkpoint_ms_median_{tag}"] = round(r["checkpoint_ms_median"], 1)
        metrics[f"checkpoint_ms_p99_{tag}"] = round(r["checkpoint_ms_p99"], 1)
        metrics[f"samples_{tag}"] = r["samples"]
        metrics[f"stash_create_ms_median_{tag}"] = round(r["stash_create_ms_median"], 1)
        metrics[f"disk_bytes_per_checkpoint_{tag}"] = r["disk_bytes_per_checkpoint"]
        metrics[f"object_bytes_per_checkpoint_{tag}"] = r["object_bytes_per_checkpoint"]
    print(
        json.dumps(
            {
                "benchmark": "checkpoint",
                "metrics": metrics,
                "samples": min(per_size.values()),
                "max_untracked_file_bytes": opts.max_untracked_bytes,
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            }
        )
    )


if __name__ == "__main__":
    main()
