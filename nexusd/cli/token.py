"""`nexusd token …`: bearer tokens of the context API, each mapped to a role."""

from __future__ import annotations

from pathlib import Path

import click

from nexusd.cli._common import echo_json, open_repo, repo_option
from nexusd.cli._group import group


@group()
def token() -> None:
    """Create, list and revoke the API's bearer tokens (stored hashed under .git/nexus/).

    \b
    Examples:
      nexusd token create --role developer --name cursor
      nexusd token list
      nexusd token revoke cursor
    """


@token.command()
@click.option("--role", required=True, help="The token's role (see api.roles).")
@click.option("--name", default="", help="A name to recognise it by in `token list`.")
@repo_option
def create(role: str, name: str, repo: Path | None) -> None:
    """Make a token of ROLE and print it once (only its hash is kept)."""
    from nexusd.api.bearer import TokenStore, name_problem
    from nexusd.api.roles import Access

    problem = name_problem(name)
    if problem is not None:
        raise click.BadParameter(
            f"{problem}; use letters, digits, spaces or - _ .", param_hint="--name"
        )
    layout, config = open_repo(repo)
    Access.from_config(config).check_role(role)
    click.echo(TokenStore(layout).create(role, name))
    click.echo(f"role {role}; shown once, stored hashed in {layout.nexus_dir}", err=True)


@token.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON.")
@repo_option
def list_(as_json: bool, repo: Path | None) -> None:
    """List the tokens: hash prefix, role, name, creation time."""
    from dataclasses import asdict

    from nexusd.api.bearer import TokenStore, shown_name

    layout, _ = open_repo(repo)
    records = TokenStore(layout).list()
    if as_json:
        echo_json([asdict(r) for r in records])
        return
    if not records:
        click.echo("no tokens (create one with `nexusd token create --role R`)")
    for r in records:
        name = shown_name(r.name) or "-"
        role = shown_name(r.role)  # the store is a file: hand-edited names are not trusted
        click.echo(f"{r.sha256[:12]}  {role:<10}  {name:<16}  {shown_name(r.created_at)}")


@token.command()
@click.argument("which")
@repo_option
def revoke(which: str, repo: Path | None) -> None:
    """Forget the tokens whose name is WHICH or whose hash starts with it."""
    from nexusd.api.bearer import TokenStore
    from nexusd.errors import NexusError

    layout, _ = open_repo(repo)
    if len(which) < 4:
        raise click.UsageError("give a token's name or at least 4 characters of its hash")
    gone = TokenStore(layout).revoke(which)
    if not gone:
        raise NexusError(f"no token named or hashed {which!r}", hint="see `nexusd token list`")
    click.echo(f"revoked {gone} token(s)")
