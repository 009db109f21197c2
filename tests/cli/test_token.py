"""`nexusd token create|list|revoke` in real repositories, through click."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from nexusd.cli import cli


def token(repo: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["token", *args, "-C", str(repo)])


def names(repo: Path) -> list[str]:
    listed = token(repo, "list", "--json")
    assert listed.exit_code == 0, listed.output
    return [r["name"] for r in json.loads(listed.stdout)]


def test_create_json_prints_the_token_once(repo: Path) -> None:
    made = token(repo, "create", "--role", "developer", "--name", "cursor", "--json")
    assert made.exit_code == 0, made.output
    data = json.loads(made.stdout)
    assert data["role"] == "developer" and data["name"] == "cursor"
    assert data["token"].startswith("nxd_")
    assert data["token"] not in (repo / ".git" / "nexus" / "tokens.json").read_text()


def test_a_short_name_is_revoked_by_name_and_takes_no_other_token(repo: Path) -> None:
    # `ci` was refused ("at least 4 characters"), and a name that is also a hash prefix
    # (`ab`, `beef`) revoked every token whose hash started with it.
    for name in ("ci", "ci", "other", "more", "again"):
        assert token(repo, "create", "--role", "user", "--name", name).exit_code == 0
    hashes = {r["sha256"][:2] for r in json.loads(token(repo, "list", "--json").stdout)}
    prefix = next(iter(hashes))
    assert token(repo, "create", "--role", "user", "--name", prefix).exit_code == 0
    before = len(names(repo))
    gone = token(repo, "revoke", prefix, "--json")
    assert gone.exit_code == 0, gone.output
    assert [r["name"] for r in json.loads(gone.stdout)] == [prefix]
    assert len(names(repo)) == before - 1
    revoked = token(repo, "revoke", "ci")
    assert revoked.exit_code == 0 and "revoked 2 token(s)" in revoked.stdout
    assert sorted(names(repo)) == ["again", "more", "other"]


def test_revoke_by_hash_prefix_refuses_an_ambiguous_one(repo: Path) -> None:
    assert token(repo, "create", "--role", "user", "--name", "seed").exit_code == 0
    store = repo / ".git" / "nexus" / "tokens.json"
    data = json.loads(store.read_text())
    seed = data["tokens"][0]
    for n, digits in enumerate(("abcd1" + "0" * 59, "abcd2" + "0" * 59)):
        data["tokens"].append({**seed, "sha256": digits, "name": f"hand{n}"})
    store.write_text(json.dumps(data))
    ambiguous = token(repo, "revoke", "abcd")
    assert ambiguous.exit_code == 10 and "2 tokens have a hash starting with" in ambiguous.output
    assert len(names(repo)) == 3
    assert token(repo, "revoke", "ABCD2").exit_code == 0
    assert sorted(names(repo)) == ["hand0", "seed"]
    missing = token(repo, "revoke", "zzzzzz")
    assert missing.exit_code == 10 and "no token named or hashed" in missing.output
    short = token(repo, "revoke", "zz")
    assert short.exit_code == 2 and "no token is named 'zz'" in short.output
