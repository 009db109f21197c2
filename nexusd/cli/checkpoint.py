"""`nexusd checkpoint …`: snapshot the working tree as git refs, list, diff, restore, prune."""

from __future__ import annotations

import os
from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._group import group
from nexusd.cli._style import label
from nexusd.errors import GitError
from nexusd.git import run_git

# How many left-out paths `create` names (the rest are counted).
LEFT_OUT_SHOWN = 20


@group()
def checkpoint() -> None:
    """Snapshots of the whole working tree, stored as refs/nexus/checkpoints/<id>.

    \b
    A checkpoint holds tracked and untracked (not ignored) files. Making one never
    touches HEAD, the index, the stash or any branch. `restore` changes only the
    working tree (HEAD and the index stay as they are, so `git status` then shows
    the restored files as unstaged changes) and first takes a `pre-restore`
    checkpoint, so every restore can itself be undone.

    \b
    Examples:
      nexusd checkpoint create -m "before the refactor"
      nexusd checkpoint list
      nexusd checkpoint diff 20261122T041501Z-a1b2c3          # vs the working tree
      nexusd checkpoint restore 20261122T041501Z-a1b2c3 --dry-run
      nexusd checkpoint restore 20261122T041501Z-a1b2c3 --paths src/app.py tests/
      nexusd checkpoint push origin                          # refs/nexus/* and notes
    """


@checkpoint.command()
@click.option("-m", "--message", default=None, help="Describe the checkpoint.")
@click.option("--json", "as_json", is_flag=True, help="Print the checkpoint as JSON.")
@repo_option
def create(message: str | None, as_json: bool, repo: Path | None) -> None:
    """Snapshot the working tree now (reason `manual`)."""
    from nexusd.checkpoint.snapshot import create_checkpoint

    layout, config = open_repo(repo)
    limit = config.checkpoint.max_untracked_file_bytes
    cp = create_checkpoint(layout, reason="manual", message=message, max_untracked_bytes=limit)
    shown = [{"path": path, "why": why} for path, why in cp.left_out[:LEFT_OUT_SHOWN]]
    if as_json:
        echo_json({**cp.to_dict(), "left_out": shown, "left_out_count": len(cp.left_out)})
        return
    click.echo(f"checkpoint {cp.id}")
    if cp.left_out:
        click.echo(f"  left out {len(cp.left_out)} path(s):")
        for item in shown:
            click.echo(f"    {_quoted(item['path'])}  ({item['why']})")
        if len(cp.left_out) > len(shown):
            click.echo(f"    … and {len(cp.left_out) - len(shown)} more")
    click.echo(f"  restore with: {cp.restore_command}")


@checkpoint.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@repo_option
def list_(as_json: bool, repo: Path | None) -> None:
    """List checkpoints, oldest first, with their reason, cycle and check status."""
    from nexusd.checkpoint.listing import scan
    from nexusd.checkpoint.overview import overview

    layout, _ = open_repo(repo)
    checkpoints, broken = scan(layout)
    rows = overview(layout, checkpoints)
    for bad in broken:
        # On standard error, so `--json` stays an array of readable checkpoints.
        click.echo(f"{label('warning')} checkpoint {bad.id} cannot be read: {bad.why}", err=True)
        click.echo(f"  fix: {bad.fix}", err=True)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("no checkpoints yet (make one with `nexusd checkpoint create`)")
    for r in rows:
        click.echo(
            f"{r['id']}  {r['reason']:<11} files={_or_unknown(r['files_changed']):<4} "
            f"cycle={r['cycle'] or '-':<4} branch={r['branch'] or '-'}  checks={r['checks'] or '-'}"
        )


@checkpoint.command()
@click.argument("checkpoint_id")
@click.option("--json", "as_json", is_flag=True, help="Print metadata and note as JSON.")
@repo_option
def show(checkpoint_id: str, as_json: bool, repo: Path | None) -> None:
    """Show a checkpoint's metadata, check results and changed files."""
    from nexusd.checkpoint.changed import unchanged_paths
    from nexusd.checkpoint.listing import resolve
    from nexusd.checkpoint.notes import read_note

    layout, _ = open_repo(repo)
    cp = resolve(layout, checkpoint_id)
    data = {**cp.to_dict(), "note": read_note(layout, cp.commit), "left_out": cp.left_out_notes}
    if as_json:
        echo_json(data)
        return
    for key in ("id", "time", "reason", "cycle", "branch", "state", "commit", "restore_command"):
        click.echo(f"{key:>16}: {data[key] if data[key] is not None else '-'}")
    for note in cp.left_out_notes:
        click.echo(f"{'left out':>16}: {note}")
    base = cp.parent or "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    # An as-is checkpoint holds the disk's bytes of the files git converts: those held as
    # a checkout of HEAD writes them are not shown as changed (`checkpoint.changed`).
    try:
        unchanged = sorted(unchanged_paths(layout, cp))
    except GitError:
        unchanged = []  # a checkpoint git cannot read: the diff below says so, and what to do
    specs = [":/", *(f":(top,literal,exclude){p}" for p in unchanged)]
    _git_passthrough(layout.root, "diff", "--stat", base, cp.commit, "--", *specs)


@checkpoint.command()
@click.argument("first")
@click.argument("second", required=False)
@click.option("--stat", is_flag=True, help="Only a summary of changed files.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the files changed as JSON: path, status (added, modified, deleted) and lines"
    " added and deleted (null for a binary file); no patch.",
)
@repo_option
def diff(first: str, second: str | None, stat: bool, as_json: bool, repo: Path | None) -> None:
    """Diff a checkpoint against the working tree (or against a second checkpoint)."""
    from nexusd.checkpoint.listing import resolve
    from nexusd.checkpoint.snapshot import snapshot_tree
    from nexusd.checkpoint.tree_diff import changed_files

    layout, config = open_repo(repo)
    old = resolve(layout, first)
    limit = config.checkpoint.max_untracked_file_bytes
    to = resolve(layout, second) if second else None
    new = to.tree if to else snapshot_tree(layout, max_untracked_bytes=limit)
    if as_json:
        files = [f.to_dict() for f in changed_files(layout, old.tree, new)]
        echo_json({"from": old.id, "to": to.id if to else None, "files": files})
        return
    _git_passthrough(layout.root, "diff", *(["--stat"] if stat else []), old.tree, new)


@checkpoint.command()
@click.argument("checkpoint_id")
@click.argument("more_paths", nargs=-1, metavar="[PATHS]...")
@click.option("--dry-run", is_flag=True, help="Print what would change; change nothing.")
@click.option("--paths", "paths", multiple=True, help="Restore only these paths (files or dirs).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@repo_option
def restore(
    *,
    checkpoint_id: str,
    more_paths: tuple[str, ...],
    dry_run: bool,
    paths: tuple[str, ...],
    as_json: bool,
    repo: Path | None,
) -> None:
    """Make the working tree match a checkpoint (HEAD and index untouched; undoable).

    nexusd's own files (the request folders of `watch.paths`, MEMORY.md and the daily
    notes of `memory.sources`) are left as they are, so no old answer comes back and no
    old request is answered again; name them in PATHS to restore them too.
    """
    from nexusd.checkpoint.restore import restore_checkpoint

    layout, config = open_repo(repo)
    base = (repo or Path.cwd()).absolute()
    specs = [_repo_relative(base / p, layout.root) for p in (*paths, *more_paths)]
    limit = config.checkpoint.max_untracked_file_bytes
    own = [*config.watch.paths, *config.memory.sources]
    result = restore_checkpoint(
        layout,
        checkpoint_id,
        dry_run=dry_run,
        paths=specs,
        max_untracked_bytes=limit,
        nexus_files=[str(p) for p in own],
    )
    if as_json:
        echo_json(
            {
                "checkpoint": result.checkpoint.id,
                "dry_run": dry_run,
                "changes": [{"action": c.action, "path": c.path} for c in result.changes],
                "skipped": [{"path": c.path, "why": c.why} for c in result.skipped],
                "pre_restore": result.pre_restore.id if result.pre_restore else None,
            }
        )
        return
    verb = "would change" if dry_run else "changed"
    click.echo(f"{verb} {len(result.changes)} path(s) to match {result.checkpoint.id}")
    for change in (*result.changes, *result.skipped):
        click.echo("  " + change.line())
    if result.pre_restore:
        click.echo(f"undo with: {result.pre_restore.restore_command}")


@checkpoint.command()
@click.argument("checkpoint_id")
@click.option("--json", "as_json", is_flag=True, help="Print the dropped checkpoint as JSON.")
@repo_option
def drop(checkpoint_id: str, as_json: bool, repo: Path | None) -> None:
    """Delete one checkpoint ref."""
    from nexusd.checkpoint.listing import Broken, find
    from nexusd.checkpoint.listing import drop as drop_ref

    layout, _ = open_repo(repo)
    cp = find(layout, checkpoint_id)  # a broken one too: dropping is how it goes away
    drop_ref(layout, cp)
    if as_json:
        broken = isinstance(cp, Broken)
        echo_json({"id": cp.id, "ref": cp.ref, "commit": cp.commit, "broken": broken})
        return
    click.echo(f"dropped {cp.id} (commit {cp.commit[:12]})")


@checkpoint.command()
@click.option("--dry-run", is_flag=True, help="Print what would be dropped; drop nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@repo_option
def gc(dry_run: bool, as_json: bool, repo: Path | None) -> None:
    """Apply the retention policy (checkpoint.retention in the config)."""
    from nexusd.checkpoint.retention import run_gc

    layout, config = open_repo(repo)
    report = run_gc(layout, config, dry_run=dry_run)
    if as_json:
        echo_json({"kept": report.kept, "dropped": report.dropped, "dry_run": dry_run})
        return
    verb = "would drop" if dry_run else "dropped"
    click.echo(f"kept {len(report.kept)}, {verb} {len(report.dropped)}")
    for cid in report.dropped:
        click.echo(f"  {verb} {cid}")


@checkpoint.command()
@click.argument("remote")
@click.option(
    "--json", "as_json", is_flag=True, help="Print each ref pushed and what happened, as JSON."
)
@repo_option
def push(remote: str, as_json: bool, repo: Path | None) -> None:
    """Push all checkpoints and their notes to REMOTE (refs/nexus/*)."""
    from nexusd.checkpoint.remote import PushRejected, pushed_refs
    from nexusd.checkpoint.remote import push as push_refs

    layout, _ = open_repo(repo)
    try:
        report = push_refs(layout, remote)
    except PushRejected as exc:
        if not as_json:
            raise
        # Which refs went and which the remote refused (`rejected`), with the error beside
        # them; one document, and the error's exit code.
        error = {"kind": "GitError", "message": exc.message, "hint": exc.hint}
        refs = [r.to_dict() for r in pushed_refs(exc.report)]
        echo_json({"remote": remote, "refs": refs, "error": {**error, "exit_code": exc.exit_code}})
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None
    if as_json:
        echo_json({"remote": remote, "refs": [r.to_dict() for r in pushed_refs(report)]})
        return
    click.echo(report or "nothing to push")


@checkpoint.command()
@click.argument("remote")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print each ref fetched, new or updated (with its checkpoint id, or null), as JSON.",
)
@repo_option
def fetch(remote: str, as_json: bool, repo: Path | None) -> None:
    """Fetch checkpoints and their notes from REMOTE (refs/nexus/*)."""
    from nexusd.checkpoint.remote import fetch_checkpoints

    layout, _ = open_repo(repo)
    fetched = fetch_checkpoints(layout, remote)
    if as_json:
        echo_json({"remote": remote, **fetched.to_dict()})
        return
    click.echo(fetched.summary())


def _repo_relative(path: Path, root: Path) -> str:
    """`path` (absolute) relative to `root`, as git names it."""
    path = Path(os.path.normpath(path))
    rel = os.path.relpath(path, root)
    if rel == ".." or rel.startswith(".." + os.sep):
        # A symbolic link in the folders above (a /tmp that is /private/tmp) may put it
        # outside on paper only; the name itself is not resolved (it may be a link).
        rel = os.path.relpath(path.parent.resolve() / path.name, root.resolve())
    return rel


def _or_unknown(count: int | None) -> str:
    return "?" if count is None else str(count)


def _quoted(path: str) -> str:
    return path if path.isprintable() else repr(path)


def _git_passthrough(root: Path, *args: str) -> None:
    # Never check=False: an empty diff from a checkpoint git cannot read would say "no change".
    hint = (
        "`git fsck` names what is missing; drop a damaged checkpoint with `nexusd checkpoint drop`"
    )
    out = run_git(root, "--no-pager", *args, hint=hint)
    click.echo(out.decode("utf-8", "replace"), nl=False)
