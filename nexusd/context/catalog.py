"""The curated best-practice catalog (a YAML data file) and keyword matching against it."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from nexusd.code import boilerplate
from nexusd.context.goaltext import split_goal
from nexusd.errors import ConfigError

PACKAGED = "best_practices.yaml"
# Words of a keyword this short match whole words only (`ci` must not match `circle`).
_SHORT = 3
# A name from code (`total_count`, `astropy.table`, `self._lock`): the code's word, not the
# writer's (`lock` is no concurrency problem in `locket`'s or `self._lock`'s line).
# Matched from a word's start only (the match is the same): tried at every character of a
# long word (a pasted hash or base64 blob) it took time quadratic in the word's length.
_CODE_NAME = re.compile(r"(?<!\S)\S*\w[._]\w\S*")


@dataclass(frozen=True)
class Practice:
    """One catalog entry."""

    id: str
    title: str
    keywords: tuple[str, ...]
    practice: str
    diagnostic: str = ""
    generic: bool = False
    # Keywords of which one must have chosen the entry for its diagnostic to fit the request
    # (a traceback to capture fits "raises an exception", not a wrong result called a bug).
    diagnostic_when: tuple[str, ...] = ()


@dataclass(frozen=True)
class Match:
    """A catalog entry chosen for a request, with the keywords that chose it."""

    practice: Practice
    matched: tuple[str, ...]


def _loader() -> type[yaml.SafeLoader]:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_catalog(text: str, origin: str) -> tuple[Practice, ...]:
    """Validate catalog YAML; errors name the entry and the fix."""
    try:
        data = yaml.load(text, Loader=_loader())  # a safe loader (CSafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{origin}: not valid YAML ({exc})", hint="fix the syntax") from exc
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ConfigError(
            f"{origin}: a catalog needs a non-empty `entries:` list",
            hint="copy nexusd/context/best_practices.yaml and edit it",
        )
    out: list[Practice] = []
    for i, entry in enumerate(entries):
        out.append(_entry(entry, f"{origin}: entries[{i}]"))
    return tuple(out)


def _entry(entry: Any, where: str) -> Practice:
    if not isinstance(entry, dict):
        raise ConfigError(
            f"{where} must be a mapping", hint="give it id, title, keywords, practice"
        )
    for key in ("id", "title", "practice"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise ConfigError(f"{where}: `{key}` is missing", hint=f"add a `{key}:` string")
    words = entry.get("keywords", [])
    if not isinstance(words, list) or not all(isinstance(w, str | int) for w in words):
        raise ConfigError(f"{where}: `keywords` must be a list of words", hint="keywords: [a, b]")
    when = entry.get("diagnostic_when", [])
    if not isinstance(when, list) or not set(map(str, when)) <= {str(w) for w in words}:
        raise ConfigError(
            f"{where}: `diagnostic_when` must list some of the entry's keywords",
            hint="diagnostic_when: [error, exception], each also under keywords",
        )
    return Practice(
        id=entry["id"],
        title=entry["title"].strip(),
        keywords=tuple(str(w).lower() for w in words),
        practice=" ".join(entry["practice"].split()),
        diagnostic=" ".join(str(entry.get("diagnostic") or "").split()),
        generic=bool(entry.get("generic", False)),
        diagnostic_when=tuple(str(w).lower() for w in when),
    )


@functools.lru_cache(maxsize=1)
def packaged_catalog() -> tuple[Practice, ...]:
    """The catalog shipped with nexusd (package data; read once per process)."""
    text = resources.files("nexusd.context").joinpath(PACKAGED).read_text(encoding="utf-8")
    return parse_catalog(text, f"nexusd/planner/{PACKAGED}")


@functools.lru_cache(maxsize=8)
def _file_catalog(path: str, mtime_ns: int, size: int) -> tuple[Practice, ...]:
    # Keyed on mtime and size, so an edited catalog is re-read on the next request.
    return parse_catalog(Path(path).read_text(encoding="utf-8"), path)


def load_catalog(root: Path, configured: str | None) -> tuple[Practice, ...]:
    """`planner.catalog` (relative to the repository) when set, else the packaged catalog."""
    if not configured:
        return packaged_catalog()
    path = Path(configured).expanduser()
    path = path if path.is_absolute() else root / path
    try:
        stat = path.stat()
    except OSError as exc:
        raise ConfigError(
            f"planner.catalog: cannot read {path} ({exc.strerror})",
            hint="fix the path in .nexus/config.yaml, or remove the key to use the built-in one",
        ) from exc
    return _file_catalog(str(path), stat.st_mtime_ns, stat.st_size)


def _pattern(keyword: str) -> re.Pattern[str]:
    """Each word of a keyword starts a word of the text; a short one (`in`, `ci`, `s`) is the
    whole word, a longer one a stem (`nondetermin`, `flak`). Words between spaces are whole
    whatever their length, so a phrase never ends inside a longer word: `1 in` is not the
    start of `1 instead`, `broke in` not of `broke into`; a phrase's last short word may
    take a plural's `s` (`duplicate job` is said of `duplicate jobs`, `env var` of `env
    vars`)."""
    words = keyword.split()
    last = words[-1] if words else keyword
    body = r"\s+".join(re.escape(w) for w in words)
    plural = r"(?:e?s)?" if len(words) > 1 else ""
    tail = plural + r"\b" if len(last) <= _SHORT and last[-1:].isalnum() else ""
    lead = r"\b" if keyword[:1].isalnum() else ""
    return re.compile(lead + body + tail)


@functools.lru_cache(maxsize=4096)
def _compiled(keyword: str) -> re.Pattern[str]:
    return _pattern(keyword)


def matched_keywords(practice: Practice, text_lower: str) -> tuple[str, ...]:
    """The entry's keywords found in lower-cased text (word-prefix match; see `_pattern`)."""
    return tuple(k for k in practice.keywords if _compiled(k).search(text_lower))


def prose(text: str) -> str:
    """What the writer says in `text`: no code blocks, package listings, banners or names
    from code, which carry the program's words (a report's pasted `pip list`, its
    `total_count=Count(…)`), not the problem's."""
    paragraphs = split_goal(boilerplate.strip(text)).prose
    return "\n".join(_CODE_NAME.sub(" ", p) for p in paragraphs)


def match_practices(
    catalog: tuple[Practice, ...], text: str, *, limit: int = 4, minimum: int = 2
) -> tuple[Match, ...]:
    """The best-matching entries for the prose of `text`; generic entries fill up to
    `minimum`."""
    lower = prose(text).lower()
    scored: list[tuple[int, int, Match]] = []
    for order, practice in enumerate(catalog):
        if practice.generic:
            continue
        found = matched_keywords(practice, lower)
        if found:
            scored.append((-len(found), order, Match(practice, found)))
    scored.sort(key=lambda item: (item[0], item[1]))
    chosen = [match for _, _, match in scored[:limit]]
    for practice in catalog:
        if len(chosen) >= minimum:
            break
        if practice.generic:
            chosen.append(Match(practice, ()))
    return tuple(chosen)
