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
@click.option("--json", "as_json", is_flag=True, help="Print {token, role, name} as JSON.")
@repo_option
def create(role: str, name: str, as_json: bool, repo: Path | None) -> None:
    """Make a token of ROLE and print it once (only its hash is kept).

    The token alone goes to standard output, so it can be captured; the roles are
    those of `api.roles` (user, developer, analyst, admin by default).

    \b
    Examples:
      TOKEN=$(nexusd token create --role developer --name cursor)
      nexusd token create --role admin --name ops --json
    """
    from nexusd.api.bearer import TokenStore, name_problem
    from nexusd.api.roles import Access

    problem = name_problem(name)
    if problem is not None:
        raise click.BadParameter(
            f"{problem}; use letters, digits, spaces or - _ .", param_hint="--name"
        )
    layout, config = open_repo(repo)
    Access.from_config(config).check_role(role)
    secret = TokenStore(layout).create(role, name)
    if as_json:
        echo_json({"token": secret, "role": role, "name": name})
    else:
        click.echo(secret)
    click.echo(f"role {role}; shown once, stored hashed in {layout.nexus_dir}", err=True)


@token.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON.")
@repo_option
def list_(as_json: bool, repo: Path | None) -> None:
    """List the tokens: hash prefix, role, name, creation time.

    \b
    Examples:
      nexusd token list
      nexusd token list --json        # full sha256 of each token
    """
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
@click.option("--json", "as_json", is_flag=True, help="Print the revoked tokens as JSON.")
@repo_option
def revoke(which: str, as_json: bool, repo: Path | None) -> None:
    """Forget the tokens named WHICH, or the one token whose hash starts with WHICH.

    A name is matched whole (any length; every token of that name goes); a hash
    prefix needs at least 4 characters and must match one token only.

    \b
    Examples:
      nexusd token revoke cursor
      nexusd token revoke 61a3e009          # a hash prefix from `token list`
    """
    from dataclasses import asdict

    from nexusd.api.bearer import MIN_HASH_PREFIX, TokenStore

    layout, _ = open_repo(repo)
    store = TokenStore(layout)
    if len(which) < MIN_HASH_PREFIX and not any(r.name == which for r in store.list()):
        raise click.UsageError(
            f"no token is named {which!r}; give a token's name or at least"
            f" {MIN_HASH_PREFIX} characters of its hash (see `nexusd token list`)"
        )
    chosen = store.revoke(which)
    if as_json:
        echo_json([asdict(r) for r in chosen])
        return
    click.echo(f"revoked {len(chosen)} token(s)")
