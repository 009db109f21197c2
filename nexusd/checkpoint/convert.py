"""Files git converts on their way into and out of the object store keep their bytes here.

`git add` cleans a file as `core.autocrlf` and the attributes say (CRLF → LF, `$Id$`
collapsed, UTF-16 → UTF-8) and a checkout smudges it back, and that round trip is not the
identity: a CRLF file under `text=auto` comes back LF, an LF file under `eol=crlf` comes
back CRLF. So a snapshot holds such files as they are on disk (`hash-object --no-filters`)
and says so in its commit (`Nexus-Bytes: as-is`), and a restore of it writes their blobs
back untouched (`writeback`). Files with a `filter` driver keep git's own round trip: the
driver (Git LFS) keeps their contents out of the object store and gives them back whole.

The files read as they are: those `git add` reads in this snapshot (untracked, or changed
since the index recorded them) and those a checkout writes converted (`eol=crlf` or
`ident`; every file under `core.autocrlf=true`, `core.eol=crlf` or `working-tree-encoding`),
and of those only the ones holding a CRLF or a `$Id` unless every file is converted. A
file staged while git warned that it would change its line endings, and untouched since,
is held as staged, as a checkout writes it. Where no setting and no attribute converts
anything (most repositories) nothing is read, and the settings' one `git config` runs
beside the snapshot's other git commands.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from nexusd.git import git_failure, git_run, join_z, run_git, split_z, start_git, try_git
from nexusd.paths import RepoLayout

# The attributes by which git changes a file's bytes, beside `filter` (whose driver owns them).
CONVERTING = ("text", "eol", "crlf", "ident", "working-tree-encoding")
FILE_MODES = frozenset({"100644", "100755"})
# `filter` values that name no driver.
NO_DRIVER = frozenset({"unspecified", "unset", "set"})
_SETTINGS = r"^core\.(autocrlf|eol|attributesfile)$"
_BLOCK = 1 << 20
# Above this many paths one listing of the whole index is cheaper than a pathspec for each.
_PATHSPEC_MAX = 256

Settings: TypeAlias = Mapping[str, str | None]


@dataclass(frozen=True)
class Plan:
    """Which files a snapshot reads as they are on disk (see the module's docstring)."""

    autocrlf: bool = False  # core.autocrlf true or input: every file may be converted
    clean: bool = False  # `git add` may change some file's bytes
    smudge: str = ""  # files a checkout writes converted: "", "some" (by attribute) or "all"


@contextlib.contextmanager
def settings_later(layout: RepoLayout, *, wanted: bool = True) -> Iterator[Callable[[], Settings]]:
    """Start reading the settings that convert files; yield what waits for them (the read
    overlaps the snapshot's other git work instead of adding a process to it). Not
    `wanted` (a tree git cleans as usual): no process, no settings."""
    if not wanted:
        yield dict
        return
    proc = start_git(layout.root, "config", "-z", "--get-regexp", _SETTINGS)
    read: list[Settings] = []

    def wait() -> Settings:
        if not read:
            out, _err = proc.communicate()
            read.append(parse_settings(out))
        return read[0]

    try:
        yield wait
    finally:
        wait()


def parse_settings(out: bytes) -> dict[str, str | None]:
    """`git config -z --get-regexp` output as {key: value}; None for a key with no value."""
    found: dict[str, str | None] = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        if entry:
            key, newline, value = entry.partition("\n")
            found[key.lower()] = value if newline else None
    return found


def plan(layout: RepoLayout, settings: Settings, attributes: Iterable[str]) -> Plan:
    """What may convert files here: the settings and the attribute files (`attributes`:
    the `.gitattributes` paths of the working tree; the others are looked up here)."""
    autocrlf = _autocrlf(settings)
    tokens = _positive(_attribute_files(layout, attributes, settings))
    names = {token.partition("=")[0] for token in tokens}
    eol_crlf = (settings.get("core.eol") or "").lower() == "crlf"
    smudge = ""
    if autocrlf == "true" or "working-tree-encoding" in names or (eol_crlf and names):
        smudge = "all"
    elif "eol=crlf" in tokens or "ident" in names:
        smudge = "some"
    return Plan(autocrlf=bool(autocrlf), clean=bool(autocrlf or names), smudge=smudge)


def _autocrlf(settings: Settings) -> str:
    """`true`, `input` or "" (false) for `core.autocrlf` (a key with no value is true)."""
    if "core.autocrlf" not in settings:
        return ""
    value = (settings["core.autocrlf"] or "true").strip().lower()
    if value == "input":
        return "input"
    if value in ("true", "yes", "on"):
        return "true"
    return "true" if value.lstrip("-").isdigit() and int(value) != 0 else ""


def _attribute_files(layout: RepoLayout, listed: Iterable[str], settings: Settings) -> list[Path]:
    files = [layout.root / path for path in listed]
    files.append(layout.git_common_dir / "info" / "attributes")
    configured = settings.get("core.attributesfile")
    if configured:
        files.append(layout.root / Path(configured).expanduser())
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        files.append((Path(xdg) if xdg else Path("~/.config").expanduser()) / "git" / "attributes")
    # The system's file (git's default prefix); reading one git ignores only costs time.
    files.append(Path("/etc/gitattributes"))
    return files


def _positive(files: Iterable[Path]) -> set[str]:
    """The converting attributes the files set (`text`, `eol=crlf`, …), as written, macro
    definitions included: one that converts names its attributes on its own line."""
    found: set[str] = set()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            for token in parts[1:]:
                name, _, value = token.partition("=")
                if name in CONVERTING:  # `-text` and `!eol` start with `-` or `!`
                    found.add(f"{name}={value}" if value else name)
    return found


def c_quote(path: str) -> bytes:
    """`path` as a C-style quoted line, which `--stdin-paths` unquotes (newlines in names)."""
    out = bytearray(b'"')
    for byte in path.encode("utf-8", "surrogateescape"):
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def keep_bytes(
    layout: RepoLayout,
    env: Mapping[str, str],
    how: Plan,
    read: Iterable[str],
    absent: Collection[str] = (),
) -> list[str]:
    """Put the disk's bytes of the converted files among `read` (every file, when a checkout
    converts them all) in the private index `env`; return the paths that vanished meanwhile
    (the caller takes the snapshot again without them)."""
    every = how.smudge == "all"
    # Line endings and `ident` change only a file that holds a CRLF or a `$Id`: the others'
    # blobs are their bytes already, and most edits need no git process here at all.
    wanted = set() if every else {p for p in read if p not in absent and _marked(layout.root / p)}
    if not (every or wanted):
        return []
    entries = _entries(layout, env, None if every or len(wanted) > _PATHSPEC_MAX else wanted)
    files = [
        path
        for path, (mode, _oid) in entries.items()
        if mode in FILE_MODES and path not in absent and (every or path in wanted)
    ]
    converted = _converted(layout, files, env, autocrlf=how.autocrlf)
    if not converted:
        return []
    proc = git_run(
        layout.root,
        "hash-object",
        "-w",
        "--no-filters",
        "--stdin-paths",
        input=b"".join(c_quote(path) + b"\n" for path in converted),
    )
    hashes = proc.stdout.decode("ascii", "replace").split()
    if proc.returncode != 0:
        # hash-object stops at the first file it cannot open: one deleted since `add`.
        gone = [p for p in converted[len(hashes) :] if not os.path.lexists(layout.root / p)]
        if gone:
            return gone
        raise git_failure(layout.root, ("hash-object", "--no-filters"), proc)
    updates = [
        f"{entries[path][0]} {oid}\t".encode() + path.encode("utf-8", "surrogateescape") + b"\0"
        for path, oid in zip(converted, hashes, strict=True)
        if oid != entries[path][1]
    ]
    if updates:
        run_git(layout.root, "update-index", "-z", "--index-info", env=env, input=b"".join(updates))
    return []


def _marked(path: Path) -> bool:
    """Whether the regular file at `path` holds a CRLF or a `$Id` (read a block at a time)."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        with path.open("rb") as fh:
            tail = b""
            while block := fh.read(_BLOCK):
                block = tail + block
                if b"\r\n" in block or b"$Id" in block:
                    return True
                tail = block[-2:]
    except OSError:
        return False  # gone since `add` read it: what `add` read stays
    return False


def _entries(
    layout: RepoLayout, env: Mapping[str, str], paths: set[str] | None
) -> dict[str, tuple[str, str]]:
    """path → (mode, blob) of the index `env` names, of `paths` only unless None."""
    if paths is not None and not paths:
        return {}
    # ls-files reads no pathspec from its input: the few paths are arguments.
    named = ["--", *sorted(paths)] if paths is not None else []
    out = run_git(layout.root, "--literal-pathspecs", "ls-files", "-s", "-z", *named, env=env)
    found: dict[str, tuple[str, str]] = {}
    for item in split_z(out):
        meta, _, path = item.partition("\t")
        mode, oid, stage = meta.split()
        if stage == "0":
            found[path] = (mode, oid)
    return found


def _attributes(
    layout: RepoLayout,
    paths: list[str],
    names: Iterable[str],
    env: Mapping[str, str] | None = None,
    *,
    cached: bool = False,
) -> dict[str, dict[str, str]]:
    """path → {attribute: value}, as `git add` reads them, or with `cached` as a checkout of
    the index `env` names does."""
    if not paths:
        return {}
    out = run_git(
        layout.root,
        "check-attr",
        *(["--cached"] if cached else []),
        "-z",
        "--stdin",
        *names,
        env=env,
        input=join_z(paths),
    )
    # `-z` output: path NUL attribute NUL value NUL, a value possibly empty.
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, dict[str, str]] = {}
    for i in range(0, len(fields) - 2, 3):
        found.setdefault(fields[i], {})[fields[i + 1]] = fields[i + 2]
    return found


def _converted(
    layout: RepoLayout, paths: list[str], env: Mapping[str, str], *, autocrlf: bool
) -> list[str]:
    """Those of `paths` git may convert on `add`, unless a filter driver owns them."""
    found = _attributes(layout, paths, ("filter", *CONVERTING), env)
    return _converting(paths, found, every=autocrlf)


def _converting(paths: list[str], found: dict[str, dict[str, str]], *, every: bool) -> list[str]:
    """Those of `paths` whose attributes (`found`) convert them, or all when `every`, but
    never a file a filter driver owns. An unset attribute counts too (`-text` converts
    nothing): a file read or written as it is needlessly is still right, only slower."""
    kept: list[str] = []
    for path in paths:
        attrs = found.get(path, {})
        if attrs.get("filter", "unspecified") not in NO_DRIVER:
            continue
        if every or any(attrs.get(a, "unspecified") != "unspecified" for a in CONVERTING):
            kept.append(path)
    return kept


def filter_driven(layout: RepoLayout, paths: list[str], env: Mapping[str, str]) -> set[str]:
    """Those of `paths` whose attributes, in the index `env` names, give them a filter driver
    (the files a snapshot keeps as git cleaned them, whatever else converts them)."""
    found = _attributes(layout, paths, ("filter",), env, cached=True)
    return {p for p, attrs in found.items() if attrs.get("filter", "unspecified") not in NO_DRIVER}


def outside_attribute_files(layout: RepoLayout) -> list[Path]:
    """The attributes files git reads beside a tree's `.gitattributes`: the repository's
    info/attributes, the user's (`core.attributesFile`) and the system's."""
    out = try_git(layout.root, "config", "-z", "--get-regexp", _SETTINGS) or b""
    return _attribute_files(layout, (), parse_settings(out))


def checkout_converts(layout: RepoLayout, paths: list[str], env: Mapping[str, str]) -> set[str]:
    """Those of `paths` a checkout of the index `env` names may write other than their blob
    (line endings, `ident`, an encoding): any converting attribute, or `core.autocrlf=true`,
    and no filter driver (whose smudge gives its files back, as `checkout-index` runs it)."""
    if not paths:
        return set()
    out = try_git(layout.root, "config", "-z", "--get-regexp", _SETTINGS) or b""
    every = _autocrlf(parse_settings(out)) == "true"
    found = _attributes(layout, paths, ("filter", *CONVERTING), env, cached=True)
    return set(_converting(paths, found, every=every))
