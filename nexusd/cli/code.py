"""`nexusd code …`: search and inspect the code index (files, classes, functions, imports)."""

from __future__ import annotations

import os
import posixpath
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nexusd.cli._common import ProgressBar, echo_json, open_repo, repo_option
from nexusd.cli._group import group
from nexusd.errors import ConfigError, IndexStoreError, NexusError

if TYPE_CHECKING:
    from nexusd.code.service import CodeResults

SOCKET_TIMEOUT = 60.0
# A rebuild through the daemon answers when it is done: a large repository takes minutes.
REINDEX_TIMEOUT = 3600.0
NOT_FOUND_HINT = (
    "give the file's path (from here or from the repository root); "
    "`nexusd code status` lists the files skipped and why"
)


def in_repo(raw: str, repo: Path | None) -> str:
    """PATH as the index names it: a file that exists from where the command runs (`-C`)
    is taken from there; anything else is a path from the root or a suffix of one."""
    from nexusd.paths import find_repo

    if not raw.strip():
        raise click.UsageError("PATH is empty: name a file of the repository")
    root = find_repo(repo).root.resolve()
    start = (repo if repo is not None else Path.cwd()).resolve()
    raw = raw.replace("\\", "/")
    # `~` is the shell's to expand: one that reaches here is part of a name (`~backup.py`).
    given = Path(raw)
    here = Path(os.path.normpath(start / given))
    if given.is_absolute() or _on_disk(here):
        # The folders resolved (a repository reached through a symlink is still this one),
        # the file itself not: a link in the repository is named as the link.
        here = here.parent.resolve() / here.name
        if here != root and root not in here.parents:
            raise NexusError(f"`{raw}` is outside the repository at {root}")
        if here.is_dir() and not here.is_symlink():
            raise NexusError(f"`{raw}` is a folder", hint="name one file in it")
        return here.relative_to(root).as_posix()
    path = posixpath.normpath(raw)
    if path == ".." or path.startswith("../"):
        raise NexusError(f"`{raw}` is outside the repository at {root}")
    return path


def _on_disk(path: Path) -> bool:
    """Whether a file, folder or link is at `path` (False for a name too long to be one)."""
    try:
        return path.is_symlink() or path.exists()
    except (OSError, ValueError):
        return False


@group()
def code() -> None:
    """Search and inspect the code index: the classes and functions of every tracked file.

    \b
    The index is kept beside the memory index under .git/nexus/index, keyed by git
    blob id, so only changed files are parsed again. When the daemon runs, these
    commands ask it over its local socket (it keeps the index fresh); otherwise they
    open the index in this process and bring it up to date first.
    """


def _ask(repo: Path | None, request: dict[str, Any], *, as_json: bool) -> dict[str, Any]:
    """The daemon's answer to a code op, or the same answer computed in this process."""
    from nexusd.code.ops import handle_code_op
    from nexusd.daemon.lock import running_pid
    from nexusd.memory.client import ask

    layout, config = open_repo(repo)
    if not config.code.enabled:
        raise ConfigError(
            "the code index is disabled (code.enabled is false)",
            hint=f"set `code: {{enabled: true}}` in {layout.config_file}",
        )
    reset = bool(request.get("reset"))
    timeout = REINDEX_TIMEOUT if request["op"] == "code_update" else SOCKET_TIMEOUT
    answer = ask(layout.socket_path, request, timeout=timeout)
    if answer is not None:
        return answer
    from nexusd.code.service import CodeIndex

    index = CodeIndex(layout, config)
    pid = running_pid(layout)
    if pid is not None:
        # A daemon without a socket (memory disabled) keeps the index: read, never write.
        if reset:
            raise IndexStoreError(
                f"the daemon (pid {pid}) keeps the code index and has no socket to ask",
                hint="`nexusd stop`, then `nexusd code reindex`, then `nexusd start`",
            )
        click.echo(f"the daemon (pid {pid}) has no socket: reading its index as stored", err=True)
        index.open()
        report = None
    else:
        report = _update_here(index, reset=reset, bar=not as_json)
    answer = handle_code_op(
        index,
        request,
        update=lambda _reset: report or index.update(),
        extra=lambda: {"daemon": False},
    )
    if answer is None or not answer.get("ok"):
        raise IndexStoreError(str((answer or {}).get("error")))
    return answer


def _update_here(index: Any, *, reset: bool, bar: bool) -> Any:
    """Update (or rebuild) the index in this process, with a progress bar on stderr."""
    progress = ProgressBar("parsing files", shown=bar)
    if reset:
        index.reset()

    def waiting() -> None:
        click.echo("another nexusd process is updating the code index; waiting for it", err=True)

    try:
        report = index.update(progress, on_wait=waiting)
    finally:
        progress.close()
    if report.parsed or report.removed:
        # Said only when it cost something: an up-to-date index is not news on every call.
        files = f"{report.parsed} file{'' if report.parsed == 1 else 's'} parsed"
        if report.removed:
            files += f", {report.removed} removed"
        click.echo(
            f"no daemon running: indexed in this process ({files} in {report.seconds:.1f}s)",
            err=True,
        )
    return report


@code.command()
@click.argument("query")
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 1000),
    default=None,
    help="Files to list, each with up to 5 units (default: code.max_results, 10).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the ranked files as JSON.")
@repo_option
def search(query: str, k: int | None, as_json: bool, repo: Path | None) -> None:
    """Rank the files and functions a question, bug report or traceback is about.

    QUERY `-` reads the text from stdin (paste a report or a traceback). A one-line QUERY
    is all title (unless run at a prompt: `$ `, `>>> `); a longer one's title is its first
    line with words past an issue template's headings, labels, comments and checklists, a
    salutation and lines that only say there is a report (`Bug report`, `Can someone
    help?`), as a plan's goal's is (none when that line was run at a prompt or opens a code
    block). Say in it what is wrong: its words weigh most, and of the two best files
    the one holding more of it goes first.
    The last line names the best tests to run or extend (tests rank low among the files:
    the fix is in the code they test).

    Example: nexusd code search "the latex printer drops the exponent" -k 5
    """
    from nexusd.code.boilerplate import pasted
    from nexusd.code.ops import results_from_dict, results_to_dict
    from nexusd.code.query import within_reach

    text = sys.stdin.read() if query == "-" else query
    if not text.strip():
        raise click.UsageError("QUERY is empty: say what to look for")
    text, cut = within_reach(text)
    answer = _ask(repo, {"op": "code_search", "query": text, "k": k}, as_json=as_json)
    results = results_from_dict(answer)
    if cut:
        said = f"the query was too long: {cut} characters of its middle were left out"
        results = replace(results, note="; ".join(filter(None, (said, results.note))))
    # An older daemon's answer says no title: None.
    title = answer.get("title")
    if as_json:
        echo_json({**results_to_dict(results), "title": title})
        return
    _print_search(results, title if pasted(text) else None)


def _print_search(results: CodeResults, title: str | None) -> None:
    """The ranked files, their units and the best tests; a pasted query's `title` first."""
    if results.note:
        click.echo(f"note: {results.note}", err=True)
    if title is not None:
        # A paste's title is one of its lines, or none: say which, its words weigh most.
        none = "none (its first line was run at a prompt or opens a code block)"
        click.echo(f"title: {title or none}", err=True)
    if not results.hits:
        click.echo("no matches")
    for hit in results.hits:
        click.echo(f"{hit.path}  {hit.score:.4f}  {'; '.join(hit.reasons)}")
        for unit in hit.units:
            click.echo(f"    {hit.path}:{unit.start}  {unit.qualname}")
    if results.tests:
        click.echo(f"tests: {'  '.join(hit.path for hit in results.tests)}")


@code.command()
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print the units as JSON.")
@repo_option
def symbols(path: str, as_json: bool, repo: Path | None) -> None:
    """List the classes, functions and methods of one indexed file, with their lines.

    Example: nexusd code symbols nexusd/code/service.py
    """
    request = {"op": "code_symbols", "path": in_repo(path, repo)}
    answer = _ask(repo, request, as_json=as_json)
    if not answer["found"]:
        raise NexusError(str(answer["note"]), hint=answer.get("hint") or NOT_FOUND_HINT)
    data = {key: answer[key] for key in ("path", "language", "status", "note", "units")}
    if as_json:
        echo_json(data)
        return
    note = f"  {data['note']}" if data["note"] else ""
    click.echo(f"{data['path']}  ({data['language']}, {data['status']}){note}")
    for unit in data["units"]:
        lines = f"{unit['start']}-{unit['end']}"
        click.echo(f"  {unit['kind']:<8} {unit['qualname']}  {lines}  {unit['signature']}")


# `PATH:SYMBOL` where PATH ends in an extension and SYMBOL may hold `::` (Rust, C++).
_TARGET = re.compile(r"(?P<path>.+?\.[A-Za-z0-9]+):(?P<symbol>(?!:).+)")


@code.command()
@click.argument("target", metavar="PATH[:SYMBOL]")
@click.option("--json", "as_json", is_flag=True, help="Print the edges as JSON.")
@repo_option
def impact(target: str, as_json: bool, repo: Path | None) -> None:
    """Show what a file or symbol uses, and what imports, calls, subclasses or tests it.

    An edge marked `?` (`calls?`, `test?`) matches by name only: that file does not
    import the target, so it may mean another thing of the same name. `names` is a
    reference that is no call (`json=json`, a function passed on). A constructor
    (`Cart.__init__`) is used where its class is called.

    SYMBOL is dotted (`Receiver.changed`); Rust's and C++'s `Receiver::changed`, Java's
    `JsonWriter#value` and Go's `(*Server).serve` name the same.

    Example: nexusd code impact nexusd/code/service.py:CodeIndex.update
    """
    from nexusd.code.ops import impact_from_dict, impact_to_dict

    path, symbol = target, ""
    if ":" in target and not (repo or Path.cwd()).joinpath(target).exists():
        # The first single colon after the file: `watch.rs:Receiver::changed` is Rust's path.
        split = _TARGET.fullmatch(target)
        path, symbol = (split["path"], split["symbol"]) if split else target.rpartition(":")[::2]
    request = {"op": "code_impact", "path": in_repo(path, repo), "symbol": symbol or None}
    answer = _ask(repo, request, as_json=as_json)
    found = impact_from_dict(answer["impact"])
    if not answer["found"]:
        listed = f"`nexusd code symbols {found.path}` lists them all"
        hint = answer.get("hint") or (listed if answer.get("missing") else NOT_FOUND_HINT)
        raise NexusError(found.note, hint=hint)
    if as_json:
        echo_json(impact_to_dict(found))
        return
    if found.note:
        click.echo(f"note: {found.note}", err=True)
    click.echo(found.path + (f":{found.symbol}" if found.symbol else ""))
    for title, edges in (("uses", found.uses), ("used by", found.used_by)):
        click.echo(f"{title}:" + ("" if edges else " nothing found"))
        for edge in edges:
            click.echo(f"  {edge.path}:{edge.line}  {edge.symbol}  ({edge.kind})")
    if any(e.kind.endswith("?") for e in (*found.uses, *found.used_by)):
        click.echo("(?: a match by name only, from a file the other side does not import)")


@code.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@repo_option
def status(as_json: bool, repo: Path | None) -> None:
    """Files, units, languages, parse statuses, skipped files, problems, last update.

    Example: nexusd code status --json
    """
    from nexusd.code.ops import status_from_answer

    found = status_from_answer(_ask(repo, {"op": "code_status"}, as_json=as_json))
    if as_json:
        echo_json(found.to_dict())
        return
    click.echo(_status_text(found))


@code.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report and status as JSON.")
@repo_option
def reindex(as_json: bool, repo: Path | None) -> None:
    """Drop the code index and rebuild it from the work tree (in the daemon, if one runs).

    Example: nexusd code reindex
    """
    from nexusd.code.ops import status_from_answer

    answer = _ask(repo, {"op": "code_update", "reset": True}, as_json=as_json)
    found = status_from_answer(answer)
    if as_json:
        echo_json({"report": answer["report"], "status": found.to_dict()})
        return
    report = answer["report"]
    click.echo(
        f"reindexed: {found.files} files, {found.units} units "
        f"({report['parsed']} parsed, {report['syntax_errors']} with syntax errors, "
        f"{report['skipped']} skipped) in {report['seconds']:.1f}s"
    )


def _counts(mapping: Any) -> str:
    return ", ".join(f"{key} {value}" for key, value in mapping.items()) or "none"


def _status_text(found: Any) -> str:
    extra = found.extra
    if found.progress:
        # An update after a checkout can parse thousands of files: not "complete" meanwhile.
        doing = "updating" if found.complete else "building"
        state = f"{doing} {found.progress[0]}/{found.progress[1]}"
    else:
        state = "complete" if found.complete else "incomplete"
    # Indexed and searched, but ranked as generated code: why one of them ranks low.
    marked = f"; {found.generated} linguist-generated (.gitattributes)" if found.generated else ""
    rows = [
        f"index        {found.index_uri}" + ("  (daemon)" if extra.get("daemon") else ""),
        f"files        {found.files}  ({_counts(found.languages)}){marked}",
        f"units        {found.units}",
        f"statuses     {_counts(found.statuses)}",
        f"skipped      {sum(found.skipped.values())}  ({_counts(found.skipped)})",
        f"state        {state}",
    ]
    last = found.last_update
    if last is not None:
        when = f" at {extra['last_update_at']}" if extra.get("last_update_at") else ""
        rows.append(
            f"last update  {last.parsed} parsed, {last.removed} removed, "
            f"{last.unchanged} unchanged in {last.seconds:.2f}s{when}"
        )
    if extra.get("updates") is not None:
        rows.append(f"updates      {extra['updates']} since the daemon started")
    if extra.get("last_error"):
        rows.append(f"last error   {extra['last_error']}")
    if found.problems:
        cut = found.problems_total > len(found.problems)
        rows.append(
            "problems:"
            + (f" (the first {len(found.problems)} of {found.problems_total})" if cut else "")
        )
        rows.extend(f"  {line}" for line in found.problems)
    if found.skipped_files:
        more = sum(found.skipped.values()) - len(found.skipped_files)
        rows.append("skipped:" + (f" (the first {len(found.skipped_files)})" if more > 0 else ""))
        rows.extend(f"  {line}" for line in found.skipped_files)
    return "\n".join(rows)
