"""`nexusd memory …`: search, add, reindex and inspect the memory index."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from nexusd.cli._common import echo_json, local_memory_service, open_repo, repo_option
from nexusd.cli._group import group
from nexusd.memory.client import ask
from nexusd.memory.search import MODES, SearchResults


@group()
def memory() -> None:
    """Search and maintain the memory index (MEMORY.md, memory/daily/*.md, extra globs).

    \b
    The markdown is canonical; the index under .git/nexus/index is derived and
    `nexusd memory reindex` rebuilds it. When the daemon runs, search asks it
    over a local socket (the model stays loaded); otherwise the command loads
    the model itself (saying so; `--mode keyword` never loads it).
    """


def _print_results(results: SearchResults) -> None:
    if results.note:
        click.echo(f"note: {results.note}", err=True)
    if not results.hits:
        click.echo("no matches")
    for hit in results.hits:
        found = "+".join(hit.retrievers)
        click.echo(f"{hit.citation}  {hit.score:.4f}  [{found}]  {hit.heading}")
        click.echo(f"    {hit.snippet}")


def _read_queries(stream: Any) -> list[dict[str, Any]]:
    """The `--queries` file's objects, refusing a bad line by its number."""
    batch: list[dict[str, Any]] = []
    try:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise click.BadParameter(
                    f"line {number}: not JSON ({exc}); write one object a line, "
                    '{"id": …, "query": "…"}',
                    param_hint="--queries",
                ) from exc
            if not isinstance(item, dict) or not isinstance(item.get("query"), str):
                raise click.BadParameter(
                    f'line {number}: give "query" as a string, e.g. {{"id": 1, "query": "…"}}',
                    param_hint="--queries",
                )
            batch.append(item)
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"the file is not UTF-8 text ({exc.reason}); save it as UTF-8",
            param_hint="--queries",
        ) from exc
    return batch


@memory.command()
@click.argument("query", required=False)
@click.option("-k", "k", type=click.IntRange(1, 1000), default=None, help="Number of results.")
@click.option("--mode", type=click.Choice(MODES), default=None, help="Retrievers (default hybrid).")
@click.option("--category", default=None, help="Only chunks of this category (e.g. lessons).")
@click.option("--path", "path_glob", default=None, help="Only files matching this glob.")
@click.option("--since", default=None, help="Only chunks dated on or after YYYY-MM-DD.")
@click.option("--until", default=None, help="Only chunks dated on or before YYYY-MM-DD.")
@click.option(
    "--queries",
    type=click.File("r"),
    default=None,
    help='JSON lines {"id": …, "query": …}; prints one JSON line per query.',
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@repo_option
def search(
    query: str | None, queries: Any, as_json: bool, repo: Path | None, **options: Any
) -> None:
    """Find memory by meaning and by exact words; cites path:line.

    Example: nexusd memory search "why did the login test flake" --category lessons
    """
    layout, config = open_repo(repo)
    if queries is not None and query is not None:
        raise click.UsageError("give a QUERY or --queries FILE, not both")
    if queries is None and not (query or "").strip():
        raise click.UsageError("give a QUERY (some words to look for) or --queries FILE")
    batch = _read_queries(queries) if queries is not None else [{"id": None, "query": query}]
    opts = {k: v for k, v in options.items() if v is not None}
    # Keyword search needs no model: without a daemon, do not pay seconds to load one.
    vector = (opts.get("mode") or config.memory.search.mode) != "keyword"
    service: Any = None
    for item in batch:
        answer = (
            None
            if service
            else ask(layout.socket_path, {"op": "search", "query": item["query"], **opts})
        )
        if answer is not None:
            results = SearchResults.from_dict(answer["results"])
        else:
            service = service or local_memory_service(
                layout, config, quiet=queries is not None, vector=vector
            )
            results = service.search(str(item["query"]), **opts)
        if queries is not None:
            click.echo(json.dumps({"id": item.get("id"), **results.to_dict()}, ensure_ascii=False))
        elif as_json:
            echo_json(results.to_dict())
        else:
            _print_results(results)
    if service is not None:
        service.stop()


@memory.command()
@click.argument("text")
@click.option("--category", default=None, help="Heading to file it under (default Notes).")
@click.option("--tags", default="", help="Comma-separated tags, e.g. ci,flaky.")
@click.option("--daily", is_flag=True, help="Append to today's daily note instead.")
@repo_option
def add(text: str, category: str | None, tags: str, daily: bool, repo: Path | None) -> None:
    """Append an entry to MEMORY.md (under its category heading) or today's note, and index it."""
    from nexusd.memory.writes import add_memory

    layout, config = open_repo(repo)
    tag_list = [t for t in (s.strip() for s in tags.split(",")) if t]
    path = add_memory(layout, text, category=category, tags=tag_list, daily=daily)
    rel = path.relative_to(layout.root).as_posix()
    if ask(layout.socket_path, {"op": "sync", "paths": [str(path)]}) is None:
        service = local_memory_service(layout, config)
        service.stop()
    click.echo(f"added to {rel} and indexed")


@memory.command()
@click.option("--json", "as_json", is_flag=True, help="Print the sync report as JSON.")
@repo_option
def reindex(as_json: bool, repo: Path | None) -> None:
    """Delete the index and rebuild it from the markdown."""
    from nexusd.memory.service import MemoryService

    layout, config = open_repo(repo)
    service = MemoryService(layout, config)
    if not service.embedder.load():
        click.echo(f"warning: model unavailable ({service.embedder.error}); keyword only", err=True)
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None and not as_json:
            bar = click.progressbar(length=max(total, 1), label="embedding chunks", file=sys.stderr)
            bar.__enter__()
        if bar is not None:
            bar.update(done - bar.pos)

    report = service.reindex(progress=progress)
    if bar is not None:
        bar.__exit__(None, None, None)
    service.stop()
    if as_json:
        echo_json(asdict(report))
        return
    click.echo(
        f"reindexed {report.files} files: {report.written} chunks, "
        f"{report.embedded} embedded, {report.seconds:.1f}s"
    )
    for rel, why in report.skipped:
        click.echo(f"skipped {rel}: {why}")


@memory.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@repo_option
def stats(as_json: bool, repo: Path | None) -> None:
    """Files on disk, chunks indexed, stale/missing/orphaned chunks, fragments, model status."""
    from nexusd.memory.service import MemoryService

    layout, config = open_repo(repo)
    answer = ask(layout.socket_path, {"op": "stats"})
    if answer is not None:
        data = answer["stats"]
    else:
        service = MemoryService(layout, config)
        data = service.stats().to_dict()
        data["model_status"] = "not loaded (no daemon running)"
    if as_json:
        echo_json(data)
        return
    for key, value in data.items():
        click.echo(f"{key.replace('_', ' '):>20}: {value}")
    if data["drift"]:
        click.echo(
            f"drift: {data['drift']} chunks differ from the markdown; "
            "run `nexusd memory reindex` or start the daemon",
            err=True,
        )
