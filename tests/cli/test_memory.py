"""`nexusd memory …` through click's CliRunner, on real repositories, model and tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from daemon.helpers import nexusd_env

from nexusd.cli import cli
from nexusd.config import load_config
from nexusd.memory.embedder import shared_embedder
from nexusd.memory.server import SearchServer
from nexusd.memory.service import MemoryService
from nexusd.paths import find_repo

pytestmark = pytest.mark.model


@pytest.fixture(scope="module", autouse=True)
def _model() -> None:
    """Load the packaged model once into the process-wide cache the CLI uses."""
    import lancedb  # noqa: F401  (its event-loop thread starts before the leak guard looks)

    emb = shared_embedder("all-MiniLM-L6-v2")
    assert emb.load(), emb.error


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["memory", *args, "-C", str(repo)], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_add_then_search_by_meaning_and_words(repo: Path) -> None:
    code, out, _ = run(
        repo,
        "add",
        "Never run the migrations on Fridays",
        "--category",
        "lessons",
        "--tags",
        "ops,db",
    )
    assert (code, out.strip()) == (0, "added to MEMORY.md and indexed")
    code, out, err = run(repo, "search", "database schema changes at the end of the week")
    assert code == 0
    assert out.splitlines()[0].startswith("MEMORY.md:5  ")
    assert "Fridays" in out and "no daemon running" in err and "loaded the embedding model" in err
    code, out, _ = run(repo, "search", "Fridays", "--mode", "keyword", "--json")
    data = json.loads(out)
    assert data["mode"] == "keyword"
    assert data["hits"][0]["citation"] == "MEMORY.md:5"
    assert data["hits"][0]["tags"] == ["ops", "db"]
    code, out, _ = run(repo, "search", "Fridays", "--category", "decisions", "--json")
    assert json.loads(out)["hits"] == []


def test_queries_file_prints_one_json_line_per_query(repo: Path, tmp_path: Path) -> None:
    run(repo, "add", "Cache pip downloads in CI", "--daily")
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "q1", "query": "pip cache"}\n\n{"id": 2, "query": "zebra"}\n', encoding="utf-8"
    )
    code, out, _ = run(repo, "search", "--queries", str(queries), "-k", "1")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [line["id"] for line in lines] == ["q1", 2]
    assert lines[0]["hits"][0]["path"].startswith("memory/daily/")


def test_stats_and_reindex(repo: Path) -> None:
    (repo / "MEMORY.md").write_text("# M\n\n## A\n\none\n\n## B\n\ntwo\n", encoding="utf-8")
    code, out, _ = run(repo, "reindex", "--json")
    assert code == 0 and json.loads(out)["written"] == 2
    code, out, _ = run(repo, "stats", "--json")
    data = json.loads(out)
    assert (data["files_on_disk"], data["chunks_indexed"], data["drift"]) == (1, 2, 0)
    (repo / "MEMORY.md").write_text("# M\n\n## A\n\none, edited\n", encoding="utf-8")
    code, out, err = run(repo, "stats")
    assert code == 0 and "drift: 2 chunks differ" in err
    assert "chunks indexed: 2" in out


def test_search_asks_the_running_server_first(repo: Path) -> None:
    (repo / "MEMORY.md").write_text(
        "# M\n\n## Lessons\n\nUse short socket paths.\n", encoding="utf-8"
    )
    layout = find_repo(repo)
    service = MemoryService(layout, load_config(layout.root))
    service.start(background=False)
    server = SearchServer(layout, service)
    server.start()
    try:
        code, out, err = run(repo, "search", "socket paths", "-k", "1")
        stats_code, stats_out, _ = run(repo, "stats", "--json")
    finally:
        server.stop()
        service.stop()
    assert stats_code == 0
    assert code == 0 and out.startswith("MEMORY.md:5") and "no daemon" not in err
    assert json.loads(stats_out)["model_status"] == "ready"


def test_search_needs_a_query(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["memory", "search", "-C", str(repo)])
    assert result.exit_code == 2 and "QUERY" in result.output


def _search_in_subprocess(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`nexusd memory search ARGS` in a fresh process; its last stdout line lists the heavy
    model modules that process imported."""
    script = (
        "import json, sys\n"
        "from nexusd.cli import cli\n"
        "try:\n"
        "    cli.main(sys.argv[1:], prog_name='nexusd', standalone_mode=False)\n"
        "finally:\n"
        "    heavy = ('torch', 'sentence_transformers', 'transformers')\n"
        "    print(json.dumps(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    return subprocess.run(
        [sys.executable, "-P", "-c", script, "memory", "search", *args, "-C", str(repo)],
        cwd=repo,
        env=nexusd_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


def test_keyword_search_without_a_daemon_never_loads_the_model(repo: Path) -> None:
    (repo / "MEMORY.md").write_text(
        "# Memory\n\n## Lessons\n\nThe zebrafish fixture needs a warm cache.\n", encoding="utf-8"
    )

    proc = _search_in_subprocess(repo, "zebrafish", "--mode", "keyword")

    *results, modules = proc.stdout.splitlines()
    assert json.loads(modules) == []
    assert results[0].startswith("MEMORY.md:5  ")
    assert "keyword search, embedding model not loaded" in proc.stderr
    assert "loading the embedding model" not in proc.stderr


def test_vector_search_without_a_daemon_says_it_loads_the_model_and_suggests_start(
    repo: Path,
) -> None:
    (repo / "MEMORY.md").write_text(
        "# Memory\n\n## Lessons\n\nThe zebrafish fixture needs a warm cache.\n", encoding="utf-8"
    )

    proc = _search_in_subprocess(repo, "aquarium animals in tests", "--mode", "vector")

    first, *rest = proc.stderr.splitlines()
    assert first.startswith("no daemon running: loading the embedding model")
    assert "`nexusd start` keeps it loaded" in first
    assert any("loaded the embedding model in" in line for line in rest)
    assert proc.stdout.splitlines()[0].startswith("MEMORY.md:5  ")


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        (b'{"id": 1, "query": "x"}\nnot json\n', "line 2: not JSON"),
        (b'{"id": 1}\n', 'line 1: give "query"'),
        (b'"just a string"\n', 'line 1: give "query"'),
        (b'{"id": 1, "query": null}\n', 'line 1: give "query"'),
        (b'{"id": 1, "query": 5}\n', 'line 1: give "query"'),
        (b"\xff\xfe{\n", "not UTF-8"),
    ],
)
def test_a_bad_queries_file_is_refused_naming_the_line(
    repo: Path, tmp_path: Path, lines: bytes, says: str
) -> None:
    # Each was a traceback and exit 70 ("a bug in nexusd"), or a search for "None".
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(lines)
    result = CliRunner().invoke(
        cli, ["memory", "search", "--queries", str(queries), "--mode", "keyword", "-C", str(repo)]
    )
    assert result.exit_code == 2, result.output
    assert says in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("extra", [["   "], ["words", "--queries", "-"]])
def test_a_blank_query_or_a_query_beside_a_queries_file_is_refused(
    repo: Path, extra: list[str]
) -> None:
    result = CliRunner().invoke(
        cli, ["memory", "search", *extra, "--mode", "keyword", "-C", str(repo)], input="{}\n"
    )
    assert result.exit_code == 2 and "QUERY" in result.stderr, result.output
