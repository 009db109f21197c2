"""GitHub linguist's `linguist-vendored` and `linguist-generated` attributes, read from a
tree's `.gitattributes` files.

Pure: the caller reads the files (the daemon from the working tree, the benchmarks from a
commit's blobs) and hands their bytes in, so both select exactly the same paths. Patterns
match as `git check-attr` matches them (`man gitattributes`): a pattern with no slash
matches the basename at any depth below its file's folder, one with a slash is anchored
there; `*`, `?` and `[...]` never cross `/`, while `**/`, `/**` and `/**/` do; a pattern
naming a folder does not reach the files in it (`vendor/**` does); later lines win over
earlier ones, a deeper `.gitattributes` over a shallower one, each attribute on its own (a
deeper file that only mentions the other attribute decides nothing about this one).

Not read, on purpose: `.git/info/attributes` and the global and system files (a clone's
own: a commit alone must give the answer), macros (`[attr]name …`), quoted and negative
patterns (git ignores the latter too), files over MAX_BYTES or holding a NUL byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

VENDORED = "linguist-vendored"
GENERATED = "linguist-generated"
NAMES = (VENDORED, GENERATED)
FILE_NAME = ".gitattributes"
MAX_BYTES = 1 << 20  # git allows 100 MiB; a real one is a few KiB
MAX_LINE = 2048  # git ignores longer lines (ATTR_MAX_LINE_LENGTH)
_BLANK = " \t\r\n"
_BLANKS = re.compile(r"[ \t\r\n]+")
_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}


@dataclass(frozen=True)
class Rule:
    """One line's setting of one attribute: the regex of the paths it matches, relative to
    its file's folder (a basename pattern as `(?:.*/)?name`), and whether it sets or clears."""

    regex: str
    name: str
    value: bool


@dataclass(frozen=True)
class AttributesFile:
    """One file's rules as one compiled alternation, the last line first: the group that
    matches is the rule that decides, so a path costs one match per file above it."""

    prefix: str  # the file's folder and a slash, "" at the root
    pattern: re.Pattern[str]
    values: tuple[bool, ...]  # per group of `pattern`, in its order

    @classmethod
    def compile(cls, folder: str, rules: Sequence[Rule]) -> AttributesFile:
        """The file in `folder` (no trailing slash, "" at the root) that holds `rules`, all
        of one attribute."""
        last_first = rules[::-1]
        pattern = re.compile("|".join(f"({r.regex})" for r in last_first), re.DOTALL)
        return cls(f"{folder}/" if folder else "", pattern, tuple(r.value for r in last_first))


def _char(c: str) -> str:
    """One character of a regex set (`&&`, `~~` unescaped warn of future set operations)."""
    return f"\\{c}" if c in "&~" else re.escape(c)


def _bracket(glob: str, start: int) -> tuple[str, int] | None:
    """The regex of the `[...]` opening at `start` and the index after it (None: malformed)."""
    i = start + 1
    negated = i < len(glob) and glob[i] in "!^"
    i += negated
    items: list[str] = []
    first = True
    while i < len(glob) and (glob[i] != "]" or first):
        first = False
        close = glob.find("]", i + 2) if glob.startswith("[:", i) else -1
        if close > i + 2 and glob[close - 1] == ":":  # else the `[` is a plain character
            name = glob[i + 2 : close - 1]
            if name not in _CLASSES:
                return None
            items.append(_CLASSES[name])
            i = close + 1
            continue
        if glob[i] == "\\":
            i += 1
            if i == len(glob):
                return None
        low = glob[i]
        if i + 2 < len(glob) and glob[i + 1] == "-" and glob[i + 2] != "]":
            high = glob[i + 3] if glob[i + 2] == "\\" and i + 3 < len(glob) else glob[i + 2]
            items.append(f"{_char(low)}-{_char(high)}")
            i += 4 if glob[i + 2] == "\\" else 3
            continue
        items.append(_char(low))
        i += 1
    if i >= len(glob):
        return None
    body = "".join(items)
    # Under git's WM_PATHNAME a bracket never matches a slash, negated or not.
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), i + 1


def glob_regex(glob: str, *, basename: bool = False) -> str | None:
    """The regex of a path glob as git's wildmatch reads it (WM_PATHNAME), None if malformed;
    a `basename` one never matches a slash (git matches it against the last component)."""
    out: list[str] = []
    # git compares the part before the first wildcard on its own and wildmatches the rest,
    # so a `**` right after it counts as the pattern's start: `x/ab**` matches `x/ab/c/d`.
    literal = next((k for k, c in enumerate(glob) if c in "*?[\\"), len(glob))
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            j = i
            while j < len(glob) and glob[j] == "*":
                j += 1
            start = i in (0, literal) or glob[i - 1] == "/"
            whole = not basename and start and (j == len(glob) or glob[j] == "/")
            if j - i >= 2 and whole and j == len(glob):
                out.append(".*")
            elif j - i >= 2 and whole:
                out.append("(?:.*/)?")  # `**/`: no folder, or any number of them
                j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            found = _bracket(glob, i)
            if found is None:
                return None
            out.append(found[0])
            i = found[1]
        elif c == "\\":
            if i + 1 == len(glob):
                return None
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _state(token: str, name: str) -> bool | None:
    """Whether an attribute token sets `name` (True), clears it (False) or is another one."""
    if token in (name, f"-{name}", f"!{name}"):
        return token == name  # `!`: back to unspecified, which is not set
    key, eq, value = token.partition("=")
    if eq and key == name:
        return value != "false"  # linguist's own test: any value but "false" is set
    return None


def parse(data: bytes, names: Sequence[str] = NAMES) -> tuple[Rule, ...]:
    """The rules of one `.gitattributes` file that mention one of `names`, in its order."""
    if len(data) > MAX_BYTES or b"\0" in data:
        return ()
    text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    rules: list[Rule] = []
    for line in text.split("\n"):
        if len(line) > MAX_LINE or not any(name in line for name in names):
            continue
        # Split as git does: str.split() would also split on form feeds and U+00A0.
        pattern, *tokens = _BLANKS.split(line.strip(_BLANK))
        if pattern[0] in '#"!' or pattern.startswith("[attr]") or pattern.endswith("/"):
            continue  # a comment, a quoted or negative pattern, a macro, a folder (no file)
        basename = "/" not in pattern
        regex = glob_regex(pattern.removeprefix("/"), basename=basename)
        if regex is None:
            continue
        for name in names:
            states = [s for s in (_state(t, name) for t in tokens) if s is not None]
            if states:
                # The last mention on the line wins, as the last line does.
                rules.append(Rule(f"(?:.*/)?{regex}" if basename else regex, name, states[-1]))
    return tuple(rules)


def _set_on(paths: Sequence[str], files: list[AttributesFile]) -> frozenset[str]:
    """Which of `paths` the rules of `files` (one attribute's) leave set."""
    if not files:
        return frozenset()
    files.sort(key=lambda f: -f.prefix.count("/"))  # the deepest first: it decides first
    found: set[str] = set()
    for path in paths:
        for f in files:
            match = f.pattern.fullmatch(path, len(f.prefix)) if path.startswith(f.prefix) else None
            if match is not None:
                if f.values[(match.lastindex or 1) - 1]:
                    found.add(path)
                break
    return frozenset(found)


def marked_paths(
    paths: Iterable[str], sources: Mapping[str, bytes], names: Sequence[str] = NAMES
) -> dict[str, frozenset[str]]:
    """name → which of `paths` the `.gitattributes` files in `sources` (path → bytes) set
    that attribute on, for each of `names`; each file is read once for all of them."""
    rules = {path: parse(data, names) for path, data in sources.items()}
    listed = list(paths)  # maybe an iterator: walked once per attribute
    found: dict[str, frozenset[str]] = {}
    for name in names:
        files = [
            AttributesFile.compile(path.rpartition("/")[0], own)
            for path, file_rules in rules.items()
            if (own := [r for r in file_rules if r.name == name])
        ]
        found[name] = _set_on(listed, files)
    return found


def vendored_paths(paths: Iterable[str], sources: Mapping[str, bytes]) -> frozenset[str]:
    """Which of `paths` the `.gitattributes` files in `sources` (path → bytes) vendor."""
    return marked_paths(paths, sources, (VENDORED,))[VENDORED]


def generated_paths(paths: Iterable[str], sources: Mapping[str, bytes]) -> frozenset[str]:
    """Which of `paths` the `.gitattributes` files in `sources` (path → bytes) mark generated."""
    return marked_paths(paths, sources, (GENERATED,))[GENERATED]
