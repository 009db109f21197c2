"""Bearer tokens of the context API: created once, stored hashed, never in the working tree.

A token reads `nxd_<repository tag>_<secret>`: the tag (8 hex digits of a hash of the
working tree's git directory when it was made) only explains a token that is not found
(one for another repository); a token is looked up by its hash, so moving or copying
the repository keeps its tokens. Only the sha256 of each token is kept, with its role, in
`<git-dir>/nexus/tokens.json` (mode 0600): git never tracks anything under `.git`, so
a token cannot be committed, and a leaked copy of the file grants nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from nexusd.atomic import atomic_write_text
from nexusd.errors import AccessError, ConfigError, NexusError
from nexusd.memory.safewrite import locked
from nexusd.paths import RepoLayout

PREFIX = "nxd"
MAX_NAME_CHARS = 64


def name_problem(name: str) -> str | None:
    """What is wrong with a token's name (a control character, too long), or None: names
    are printed by `nexusd token list`, where an escape sequence would reach the terminal."""
    if len(name) > MAX_NAME_CHARS:
        return f"a token's name is at most {MAX_NAME_CHARS} characters (this one has {len(name)})"
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        return (
            f"a token's name must be printable text: it contains {bad!r} (a control character"
            " or line break)"
        )
    return None


def shown_name(name: str) -> str:
    """`name` safe to print: a non-printable character escaped (a name stored by hand)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in name)


@dataclass(frozen=True)
class TokenRecord:
    """What is stored of one token: its hash, role, name and creation time."""

    sha256: str
    role: str
    name: str
    created_at: str


def repository_tag(layout: RepoLayout) -> str:
    """8 hex digits naming this working tree's git directory."""
    return hashlib.sha256(str(layout.git_dir.resolve()).encode()).hexdigest()[:8]


# The fewest characters of a hash that `revoke` takes as a prefix.
MIN_HASH_PREFIX = 4


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens of one working tree (`<git-dir>/nexus/tokens.json`)."""

    def __init__(self, layout: RepoLayout) -> None:
        self.layout = layout
        self.path = layout.nexus_dir / "tokens.json"
        self.tag = repository_tag(layout)
        self._cache: tuple[float, dict[str, TokenRecord]] | None = None

    def _read(self) -> dict[str, TokenRecord]:
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError:
            return {}
        if self._cache is not None and self._cache[0] == mtime:
            return self._cache[1]
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
            records = {r["sha256"]: TokenRecord(**r) for r in data["tokens"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
            raise ConfigError(
                f"the token store (nexus/tokens.json in the git directory) is unreadable ({why})",
                hint="delete it and create the tokens again: `nexusd token create` (`git"
                " rev-parse --git-dir` names the git directory)",
            ) from exc
        self._cache = (mtime, records)
        return records

    def create(self, role: str, name: str = "") -> str:
        """A new token of `role` (stored hashed); the only time the token itself is seen."""
        problem = name_problem(name)
        if problem is not None:
            raise NexusError(problem, hint="name it with letters, digits, spaces or - _ .")
        token = f"{PREFIX}_{self.tag}_{secrets.token_urlsafe(32)}"
        record = TokenRecord(_digest(token), role, name, datetime.now(UTC).isoformat())
        with locked(self.layout.nexus_dir / "locks", self.path):
            records = dict(self._read())
            records[record.sha256] = record
            self._write(records)
        return token

    def _write(self, records: dict[str, TokenRecord]) -> None:
        data = {"tokens": [asdict(r) for r in records.values()]}
        atomic_write_text(self.path, json.dumps(data, indent=2) + "\n", mode=0o600)
        self._cache = None

    def list(self) -> list[TokenRecord]:
        """Every stored token (hashes, roles, names)."""
        return sorted(self._read().values(), key=lambda r: r.created_at)

    def revoke(self, which: str) -> tuple[TokenRecord, ...]:
        """Forget the tokens named `which` (matched whole: every token of that name), or
        else the one token whose hash starts with `which` (at least MIN_HASH_PREFIX
        characters); the tokens forgotten. NexusError when none or several hashes match."""
        with locked(self.layout.nexus_dir / "locks", self.path):
            records = dict(self._read())
            # By name first: a short name such as `ab` must not take every token whose hash
            # starts with it along.
            gone = [h for h, r in records.items() if which and r.name == which]
            if not gone and len(which) >= MIN_HASH_PREFIX:
                gone = [h for h in records if h.startswith(which.lower())]
                if len(gone) > 1:
                    raise NexusError(
                        f"{len(gone)} tokens have a hash starting with {which!r}",
                        hint="give more characters of the hash (see `nexusd token list`)",
                    )
            if not gone:
                raise NexusError(
                    f"no token named or hashed {which!r}", hint="see `nexusd token list`"
                )
            found = tuple(records.pop(h) for h in gone)
            self._write(records)
        return found

    def role_of(self, authorization: str | None) -> str:
        """The role of the bearer token in an `Authorization` header; 401 otherwise."""
        hint = "send `Authorization: Bearer <token>`; create one with `nexusd token create`"
        if not authorization:
            raise AccessError("no token: this API needs a bearer token", hint=hint, status=401)
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AccessError(
                "the Authorization header is not `Bearer <token>`", hint=hint, status=401
            )
        wanted = _digest(token)
        for digest, record in self._read().items():
            if hmac.compare_digest(digest, wanted):
                return record.role
        # The tag only explains a miss: a repository moved or copied keeps its tokens.
        parts = token.split("_", 2)
        if len(parts) == 3 and parts[0] == PREFIX and parts[1] != self.tag:
            raise AccessError(
                "unknown token: it was created for another repository (or another working"
                " tree of it)",
                hint="create one in this repository's working tree: nexusd token create",
                status=401,
            )
        raise AccessError("unknown or revoked token", hint=hint, status=401)
