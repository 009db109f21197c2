"""The cached configuration: used only while no file it depends on changed, and what lets
`nexusd checkpoint create` start without importing YAML."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git

from nexusd.config import cache as config_cache
from nexusd.config.cache import CACHE_FILE, load_config_cached
from nexusd.errors import ConfigError
from nexusd.paths import find_repo

PROJECT_ROOT = Path(__file__).resolve().parents[1]
HOUR_AGO = time.time() - 3600

CREATE_AND_REPORT = """
import json, sys
from nexusd.cli import main
try:
    main(["checkpoint", "create"])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(m for m in ("yaml", "tempfile", "shutil") if m in sys.modules)))
"""


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process a file counts as settled at once (a subprocess waits for real)."""
    monkeypatch.setattr(config_cache, "RACY_SECONDS", 0.0)


def _config(repo: Path, text: str, *, when: float | None = HOUR_AGO) -> Path:
    path = repo / ".nexus" / "config.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if when is not None:
        os.utime(path, (when, when))  # an old mtime; the ctime is now
    return path


def _imported(repo: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.run(
        [sys.executable, "-P", "-c", CREATE_AND_REPORT],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return list(json.loads(proc.stdout.splitlines()[-1]))


def test_checkpoint_create_imports_only_what_it_needs(repo: Path) -> None:
    _config(repo, "checkpoint:\n  max_untracked_file_bytes: 1000000\n")
    (repo / "new.txt").write_text("untracked\n", encoding="utf-8")
    # A file changed within RACY_SECONDS is not cached (its ctime is now, whatever its mtime).
    time.sleep(config_cache.RACY_SECONDS + 0.1)
    assert "yaml" in _imported(repo)  # the first run reads the file (and caches it)
    assert _imported(repo) == []  # then: no YAML, no tempfile or shutil
    assert len(git(repo, "for-each-ref", "refs/nexus/checkpoints/").splitlines()) == 2


def test_every_module_the_configuration_is_built_from_is_a_dependency(repo: Path) -> None:
    # defaults.py, split out of load.py, was once missing: editing a default kept the old one.
    load_config_cached(find_repo(repo))
    depends = set(config_cache._depends_on(find_repo(repo)))
    built_from = {
        Path(str(module.__file__))
        for name, module in list(sys.modules.items())
        if name.startswith("nexusd.config.") and getattr(module, "__file__", None)
    }
    assert "nexusd.config.defaults" in sys.modules
    assert built_from <= depends, sorted(map(str, built_from - depends))


@pytest.mark.usefixtures("settled_at_once")
def test_an_edit_keeping_size_and_mtime_is_still_seen(repo: Path) -> None:
    layout = find_repo(repo)
    path = _config(repo, "watch:\n  debounce_ms: 61\n")
    assert load_config_cached(layout).get("watch.debounce_ms") == 61
    assert (layout.state_dir / CACHE_FILE).is_file()
    _config(repo, "watch:\n  debounce_ms: 62\n")  # same size, same mtime: the ctime moved
    assert path.stat().st_mtime == HOUR_AGO or abs(path.stat().st_mtime - HOUR_AGO) < 1
    assert load_config_cached(layout).get("watch.debounce_ms") == 62


def test_a_file_changed_just_now_or_invalid_is_not_cached(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_cache, "RACY_SECONDS", 30.0)
    layout = find_repo(repo)
    _config(repo, "watch:\n  debounce_ms: 63\n", when=HOUR_AGO)  # `touch -d`: only the ctime is new
    assert load_config_cached(layout).get("watch.debounce_ms") == 63
    assert not (layout.state_dir / CACHE_FILE).exists()  # could change again in this tick
    _config(repo, "watch:\n  debounce_ms: -1\n")
    with pytest.raises(ConfigError):
        load_config_cached(layout)
    assert not (layout.state_dir / CACHE_FILE).exists()


@pytest.mark.usefixtures("settled_at_once")
def test_a_cached_configuration_equals_a_fresh_load(repo: Path) -> None:
    from nexusd.config import load_config

    layout = find_repo(repo)
    _config(repo, "checks:\n  - name: unit\n    run: pytest -q\n")
    load_config_cached(layout)
    cached = load_config_cached(layout)
    assert (layout.state_dir / CACHE_FILE).is_file()
    fresh = load_config(repo)
    assert cached.data == fresh.data and cached.sources == fresh.sources


@pytest.mark.usefixtures("settled_at_once")
def test_a_planner_plugin_removed_since_the_cache_is_noticed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether `planner.provider` is valid depends on the installed plugins: a cache made
    while one was installed is not used once it is gone (found by review)."""
    plug = tmp_path / "plug"
    dist = plug / "fakeplug-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[nexusd.planners]\nfakeplug = nexusd.models.offline:OfflineProvider\n"
    )
    layout = find_repo(repo)
    _config(repo, "planner:\n  provider: fakeplug\n")
    with monkeypatch.context() as installed:
        installed.syspath_prepend(str(plug))
        assert load_config_cached(layout).get("planner.provider") == "fakeplug"
        assert (layout.state_dir / CACHE_FILE).is_file()
    with pytest.raises(ConfigError, match="fakeplug"):
        load_config_cached(layout)
