"""Shared fixtures: real git repositories in tmp_path, an isolated home, leak guards."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Threads some libraries start once per process and keep on purpose.
ALLOWED_THREAD_PREFIXES = (
    "pydevd",
    "lancedb",
    "LanceDB",
    "tqdm_monitor",  # tqdm starts one per process, on first use
    "ThreadPoolExecutor",
    "asyncio",
    "Dummy",
)


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` and return its stdout; fail the test on error."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout


def commit_files(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (path → text) into the repository at `root` and commit them."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code")
    return root


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One XDG cache for the whole session: the embedding model's ONNX export (seconds of
    work) is made once per session, not once per test, and never in the real home. Set
    for the session too, since session fixtures (the loaded model) come before any test's."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, session_cache: Path
) -> Path:
    """No test reads or writes the real home directory or the user's git config."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Nexus Test\n\temail = test@nexusd.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache))
    # The runtime the suite embeds with is the default one unless a test forces another.
    monkeypatch.delenv("NEXUSD_EMBEDDING_RUNTIME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    return home


def _children() -> set[int]:
    return children_of(os.getpid())


def children_of(me: int) -> set[int]:
    """The live (not zombie) child processes of `me`, from /proc."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Field 4 (after the parenthesised command name) is the parent pid.
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == me:
            found.add(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def _no_leaks() -> Iterator[None]:
    """Fail a test that leaves threads or child processes behind."""
    threads_before = set(threading.enumerate())
    children_before = _children()
    yield
    deadline = time.monotonic() + 5.0
    while True:
        extra = [
            t
            for t in threading.enumerate()
            if t not in threads_before
            and t.is_alive()
            and not t.name.startswith(ALLOWED_THREAD_PREFIXES)
        ]
        kids = _children() - children_before
        if (not extra and not kids) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not extra, f"test leaked threads: {[t.name for t in extra]}"
    assert not kids, f"test leaked child processes: {sorted(kids)}"


@pytest.fixture(scope="session")
def bwrap_usable() -> None:
    """Skip/fail unless bubblewrap can build its sandbox here (tests of every package that
    run a request's code or a check on bwrap)."""
    from nexusd.sandbox.bwrap_backend import usable
    from tests.sandbox.conftest import unavailable

    ok, why = usable()
    if not ok:
        unavailable(why)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """Factory: a real git repository with one commit, at tmp_path/<name>."""

    def make(name: str = "repo", *, commit: bool = True) -> Path:
        root = tmp_path / name
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        if commit:
            (root / "README.md").write_text("# demo\n", encoding="utf-8")
            git(root, "add", "README.md")
            git(root, "commit", "-q", "-m", "initial commit")
        return root

    return make


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    """A real git repository with one commit."""
    return make_repo()


# A verbatim copy of the team's shared client fixtures: CI clones the project alone
# (no ../shared beside it), and the suite must still read what real clients wrote.
SHARED_COPY = Path(__file__).resolve().parent / "data" / "shared"


def beside_checkout() -> Path | None:
    """The team's shared folder beside the checkout, when this clone sits next to it."""
    here = Path(__file__).resolve().parents[1]
    for candidate in (here.parent / "shared", here.parent.parent / "shared"):
        if (candidate / "fixtures").is_dir():
            return candidate
    return None


@pytest.fixture
def shared_dir() -> Path:
    """The team's shared folder (its `fixtures/`): beside the checkout, else the copy here."""
    return beside_checkout() or SHARED_COPY


@pytest.fixture(scope="session")
def pool_servers() -> None:
    """Start multiprocessing's resource tracker and the parser workers' fork server before a
    test's leak check counts children: the first pool starts them once, for the life of the
    process (the daemon too)."""
    from multiprocessing import forkserver, resource_tracker

    from nexusd.code.reader import pool_context

    if pool_context().get_start_method() == "forkserver":
        forkserver.ensure_running()
    resource_tracker.ensure_running()
