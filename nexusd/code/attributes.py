"""GitHub linguist's `linguist-vendored` and `linguist-generated` attributes, read from a
tree's `.gitattributes` files.

Pure: the caller reads the files (the daemon from the working tree, the benchmarks from a
commit's blobs) and hands their bytes in, so both select exactly the same paths. Patterns
match as `git check-attr` matches them (`man gitattributes`): a pattern with no slash
matches the basename at any depth below its file's folder, one with a slash is anchored
there; `*`, `?` and `[...]` never cross `/`, while `**/`, `/**` and `/**/` do; a pattern
naming a folder does not reach the files in it (`vendor/**` does); later lines win over
earlier ones, a deeper `.gitattributes` over a shallower one, each attribute on its own (a
deeper file that only mentions the other attribute decides nothing about this one). Lines
are read as git reads them: one of MAX_LINE bytes or more, or holding a name that is no
valid attribute name (`# protoc output` after the attributes), sets nothing at all.

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
MAX_LINE = 2048  # git ignores lines of this many bytes or more (ATTR_MAX_LINE_LENGTH)
_BLANK = " \t\r\n"
_BLANKS = re.compile(r"[ \t\r\n]+")
_LINE_END = re.compile(rb"\r?\n")  # git's strbuf_getline: a CR only before the LF
_MACRO = "[attr]"
# A token git accepts (attr.c's attr_name_valid): `-` unsets and `!` unspecifies a name,
# `=` gives it a value; a name never starts with `-`.
_TOKEN = re.compile(r"[-!]?[._A-Za-z0-9][-._A-Za-z0-9]*(?:=.*)?", re.DOTALL)
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
    its file's folder (a basename pattern as `(?:.*/)?name`), whether it sets or clears, and
    the literal text each of those paths starts (`head`) and ends (`tail`) with, maybe ""."""

    regex: str
    name: str
    value: bool
    head: str = ""
    tail: str = ""


@dataclass(frozen=True)
class _Group:
    """Some rules of one file as one alternation, the last line first: the group that
    matches is the last of them that matches."""

    pattern: re.Pattern[str]
    lines: tuple[int, ...]  # per group of `pattern`, the rule's index in its file

    @classmethod
    def of(cls, rules: Sequence[Rule], lines: Sequence[int]) -> _Group:
        """The alternation of `rules[i]` for each `i` of `lines`, given in the file's order."""
        last_first = lines[::-1]
        pattern = re.compile("|".join(f"({rules[i].regex})" for i in last_first), re.DOTALL)
        return cls(pattern, tuple(last_first))

    def last(self, path: str) -> int:
        """The index of the last of these rules that matches `path`, -1 if none does."""
        match = self.pattern.fullmatch(path)
        return -1 if match is None else self.lines[(match.lastindex or 1) - 1]


_Table = tuple[tuple[int, dict[str, _Group]], ...]  # (length, literal → its rules' group)


def _table(rules: Sequence[Rule], keyed: dict[str, list[int]]) -> _Table:
    lengths = sorted({len(key) for key in keyed})
    return tuple(
        (n, {key: _Group.of(rules, lines) for key, lines in keyed.items() if len(key) == n})
        for n in lengths
    )


@dataclass(frozen=True)
class AttributesFile:
    """One file's rules of one attribute, filed under the literal end or start that each
    one's paths must have: a path meets only the rules it could match, not every line (one
    alternation of 600 `**/*_genN.go` lines took 9 s on 20,000 paths, git 2 s)."""

    prefix: str  # the file's folder and a slash, "" at the root
    values: tuple[bool, ...]  # per rule, in the file's order
    tails: _Table  # the rules by the literal their paths end with
    heads: _Table  # the others by the literal their paths start with
    rest: _Group | None  # the rules with neither (`**/gen/**`)

    @classmethod
    def compile(cls, folder: str, rules: Sequence[Rule]) -> AttributesFile:
        """The file in `folder` (no trailing slash, "" at the root) that holds `rules`, all
        of one attribute."""
        tails: dict[str, list[int]] = {}
        heads: dict[str, list[int]] = {}
        rest: list[int] = []
        for i, rule in enumerate(rules):
            if rule.tail and len(rule.tail) >= len(rule.head):
                tails.setdefault(rule.tail, []).append(i)
            elif rule.head:
                heads.setdefault(rule.head, []).append(i)
            else:
                rest.append(i)
        return cls(
            f"{folder}/" if folder else "",
            tuple(r.value for r in rules),
            _table(rules, tails),
            _table(rules, heads),
            _Group.of(rules, rest) if rest else None,
        )

    def decide(self, path: str) -> bool | None:
        """Whether the last rule matching `path` (relative to the file's folder) sets the
        attribute, None when no rule matches."""
        last = self.rest.last(path) if self.rest is not None else -1
        for n, groups in self.tails:
            group = groups.get(path[-n:])  # shorter than n: no key that long
            if group is not None and group.lines[0] > last:
                last = max(last, group.last(path))
        for n, groups in self.heads:
            group = groups.get(path[:n])
            if group is not None and group.lines[0] > last:
                last = max(last, group.last(path))
        return None if last < 0 else self.values[last]


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
            # A range backwards (`z-a`) holds nothing; git still matched its first character
            # on its own before it read the `-` (and a regex would not compile).
            items.append(f"{_char(low)}-{_char(high)}" if low <= high else _char(low))
            i += 4 if glob[i + 2] == "\\" else 3
            continue
        items.append(_char(low))
        i += 1
    if i >= len(glob):
        return None
    body = "".join(items)
    # Under git's WM_PATHNAME a bracket never matches a slash, negated or not.
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), i + 1


def _literal_run(chars: Iterable[str | None]) -> str:
    """The characters before the first None."""
    run: list[str] = []
    for c in chars:
        if c is None:
            break
        run.append(c)
    return "".join(run)


def _translate(glob: str, basename: bool) -> tuple[str, str, str] | None:
    """`glob_regex`'s regex, and the literal text every path it matches starts and ends with
    (maybe ""), None if malformed."""
    out: list[str] = []
    chars: list[str | None] = []  # per piece of `out`: its literal character, or None
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
            # `**\/` crosses folders too, but wildmatch's "no folder at all" is for `**/` only.
            slash = 2 if glob.startswith("\\/", j) else 1 if glob.startswith("/", j) else 0
            whole = not basename and start and (j == len(glob) or slash > 0)
            if j - i >= 2 and whole and j == len(glob):
                out.append(".*")
            elif j - i >= 2 and whole:
                out.append("(?:.*/)?" if slash == 1 else ".*/")  # `**/`: none, or any number
                j += slash
            else:
                out.append("[^/]*")
            chars.append(None)
            i = j
        elif c == "?":
            out.append("[^/]")
            chars.append(None)
            i += 1
        elif c == "[":
            found = _bracket(glob, i)
            if found is None:
                return None
            out.append(found[0])
            chars.append(None)
            i = found[1]
        elif c == "\\":
            if i + 1 == len(glob):
                return None
            out.append(re.escape(glob[i + 1]))
            chars.append(glob[i + 1])
            i += 2
        else:
            out.append(re.escape(c))
            chars.append(c)
            i += 1
    return _linear(out, chars), _literal_run(chars), _literal_run(reversed(chars))[::-1]


def _linear(out: list[str], chars: list[str | None]) -> str:
    """The pieces as one regex in which a `*` followed, within its folder, by more text and
    another `*` takes the first place that text matches, and keeps it (an atomic group):
    `*a*a*a*a*b` would otherwise backtrack through every split of a long name (minutes; git's
    wildmatch stops early). The first place is as good as any for a middle piece of fixed
    length: whatever a later place could match after it, the first can too."""
    stars = [k for k, piece in enumerate(out) if piece == "[^/]*"]
    done: list[str] = []
    k = 0
    while k < len(out):
        nxt = next((m for m in stars if m > k), None) if out[k] == "[^/]*" else None
        if nxt is not None and all(chars[m] != "/" for m in range(k + 1, nxt)):
            done.append(f"(?>[^/]*?{''.join(out[k + 1 : nxt])})")
            k = nxt
            continue
        done.append(out[k])
        k += 1
    return "".join(done)


def glob_regex(glob: str, *, basename: bool = False) -> str | None:
    """The regex of a path glob as git's wildmatch reads it (WM_PATHNAME), None if malformed;
    a `basename` one never matches a slash (git matches it against the last component)."""
    found = _translate(glob, basename)
    return None if found is None else found[0]


def _state(token: str, name: str) -> bool | None:
    """Whether an attribute token sets `name` (True), clears it (False) or is another one."""
    key, eq, value = token.partition("=")
    if key[:1] in ("-", "!") and key[1:] == name:
        # `-` unsets, `!` goes back to unspecified (not set either), whatever an `=` says.
        return False
    if key == name:
        return not eq or value != "false"  # linguist's own test: any value but "false" is set
    return None


def parse(data: bytes, names: Sequence[str] = NAMES) -> tuple[Rule, ...]:
    """The rules of one `.gitattributes` file that mention one of `names`, in its order."""
    if len(data) > MAX_BYTES or b"\0" in data:
        return ()
    keys = [name.encode() for name in names]
    rules: list[Rule] = []
    # Split into lines, and measured, in bytes as git reads the file (its BOM dropped).
    for raw in _LINE_END.split(data.removeprefix(b"\xef\xbb\xbf")):
        if len(raw) >= MAX_LINE or not any(key in raw for key in keys):
            continue
        line = raw.decode("utf-8", "surrogateescape")
        # Split as git does: str.split() would also split on form feeds and U+00A0.
        pattern, *tokens = _BLANKS.split(line.strip(_BLANK))
        macro = pattern.startswith(_MACRO) and len(pattern) > len(_MACRO)
        if pattern[0] in '#"!' or macro or pattern.endswith("/"):
            continue  # a comment, a quoted or negative pattern, a macro, a folder (no file)
        if not all(_TOKEN.fullmatch(t) for t in tokens):
            continue  # git sets nothing of a line with an invalid name (and warns)
        basename = "/" not in pattern
        found = _translate(pattern.removeprefix("/"), basename)
        if found is None:
            continue
        regex, head, tail = found
        for name in names:
            states = [s for s in (_state(t, name) for t in tokens) if s is not None]
            if not states:
                continue
            # The last mention on the line wins, as the last line does. A basename pattern
            # matches the last component: its start is no start of the path.
            value = states[-1]
            if basename:
                rules.append(Rule(f"(?:.*/)?{regex}", name, value, "", tail))
            else:
                rules.append(Rule(regex, name, value, head, tail))
    return tuple(rules)


def _set_on(paths: Sequence[str], files: list[AttributesFile]) -> frozenset[str]:
    """Which of `paths` the rules of `files` (one attribute's) leave set."""
    if not files:
        return frozenset()
    files.sort(key=lambda f: -f.prefix.count("/"))  # the deepest first: it decides first
    found: set[str] = set()
    for path in paths:
        for f in files:
            decided = f.decide(path[len(f.prefix) :]) if path.startswith(f.prefix) else None
            if decided is not None:
                if decided:
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
