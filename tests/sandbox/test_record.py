"""`backend: auto` leaving docker is said in every result and recorded for `nexusd status`."""

from __future__ import annotations

from pathlib import Path

from nexusd.config import load_config
from nexusd.paths import find_repo
from nexusd.sandbox.probe import FALLBACK_PREFIX
from nexusd.sandbox.record import read_choice, status_line
from nexusd.sandbox.runner import fallback_notes, run_checks

ABSENT = "nexusd-absent-image:never"


def _configure(repo: Path, backend: str, image: str = ABSENT) -> None:
    (repo / ".nexus").mkdir(exist_ok=True)
    (repo / ".nexus" / "config.yaml").write_text(
        f"sandbox:\n  backend: {backend}\n  image: {image}\n"
        "checks:\n  - name: one\n    run: 'true'\n  - name: two\n    run: 'true'\n",
        encoding="utf-8",
    )


def test_every_result_of_a_fallback_run_says_so(repo: Path) -> None:
    # The image is absent (or the engine down): auto must leave docker, and say so.
    _configure(repo, "auto")
    results = run_checks(find_repo(repo), load_config(repo))
    assert [r.backend for r in results] != ["docker", "docker"]
    for result in results:
        assert result.warnings[0].startswith(FALLBACK_PREFIX), result.warnings
        assert f"ran on {result.backend}, not docker" in result.warnings[0]
        assert ABSENT in result.warnings[0] or "not reachable" in result.warnings[0]
    assert len(fallback_notes(results)) == 1


def test_the_choice_is_recorded_for_status_every_run(repo: Path) -> None:
    layout = find_repo(repo)
    _configure(repo, "auto")
    run_checks(layout, load_config(repo))
    record = read_choice(layout)
    assert record is not None and record["configured"] == "auto"
    assert record["fallback"] and "FALLBACK" in status_line(record)
    # An explicit backend is what the user asked for: no fallback, and the record says so.
    _configure(repo, "subprocess")
    (result,) = run_checks(layout, load_config(repo), names=["one"])
    assert fallback_notes((result,)) == ()
    record = read_choice(layout)
    assert record is not None and record["backend"] == "subprocess" and not record["fallback"]
    assert "FALLBACK" not in status_line(record)
