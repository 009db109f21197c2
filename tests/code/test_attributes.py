"""`linguist-vendored` and `linguist-generated` in `.gitattributes`: git's pattern rules,
checked against git itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexusd.code.attributes import (
    MAX_BYTES,
    MAX_LINE,
    glob_regex,
    marked_paths,
    parse,
)
from tests.conftest import git

V = "linguist-vendored"
G = "linguist-generated"
# (`.gitattributes` path → content, path → whether it is vendored)
CASES: dict[str, tuple[dict[str, str], dict[str, bool]]] = {
    "basename at any depth": (
        {".gitattributes": f"*.c {V}\n"},
        {"a.c": True, "x/y/a.c": True, "a.h": False, "x/a.c.txt": False},
    ),
    "anchored star stays in its folder": (
        {".gitattributes": f"lib/*.c {V}\n"},
        {"lib/a.c": True, "lib/x/a.c": False, "src/lib/a.c": False},
    ),
    "leading slash anchors": ({".gitattributes": f"/a.c {V}\n"}, {"a.c": True, "x/a.c": False}),
    "leading **/": (
        {".gitattributes": f"**/gen/*.c {V}\n"},
        {"gen/a.c": True, "x/y/gen/a.c": True, "x/gen/y/a.c": False},
    ),
    "trailing /**": (
        {".gitattributes": f"deps/** {V}\n"},
        {"deps/a.c": True, "deps/x/y.c": True, "deps": False, "xdeps/a.c": False},
    ),
    "inner /**/": (
        {".gitattributes": f"a/**/b.c {V}\n"},
        {"a/b.c": True, "a/x/y/b.c": True, "a/xb.c": False},
    ),
    "** beside other characters is *": (
        {".gitattributes": f"deps/a**b.c {V}\n"},
        {"deps/axb.c": True, "deps/ax/yb.c": False},
    ),
    "a ** right after the literal part is at the start (as git compares)": (
        {".gitattributes": f"x/ab** {V}\ny/b**/? {V}\n"},
        {"x/ab/c/d": True, "x/abc": True, "x/a/b": False, "y/ba": True, "y/b/c/d": True},
    ),
    "**/ and /** together": (
        {".gitattributes": f"**/deps/** {V}\n"},
        {"x/deps/a/b.c": True, "deps/a.c": True, "x/deps": False},
    ),
    "a folder's name does not reach its files": (
        {".gitattributes": f"vendor {V}\nlib/ {V}\n"},
        {"vendor/x.c": False, "vendor": True, "lib/x.c": False, "a/vendor": True},
    ),
    "? and brackets never cross a slash": (
        {".gitattributes": f"d/?.c {V}\nd/[ab].h {V}\nd/[!a].py {V}\ne[/]f.c {V}\n"},
        {
            "d/a.c": True,
            "d/ab.c": False,
            "d/b.h": True,
            "d/c.h": False,
            "d/b.py": True,
            "d/a.py": False,
            "e/f.c": False,
        },
    ),
    "ranges and classes": (
        {".gitattributes": f"d/[a-c][[:digit:]].c {V}\ne/[&&~~].c {V}\nf/[[:a].c {V}\n"},
        {
            "d/b7.c": True,
            "d/d7.c": False,
            "d/bx.c": False,
            "e/&.c": True,
            "e/x.c": False,
            "f/[.c": True,  # `[:` with no `:]` before the `]`: a plain `[`
            "f/x.c": False,
        },
    ),
    "a later line wins": (
        {".gitattributes": f"deps/** {V}\ndeps/own/** -{V}\n"},
        {"deps/a.c": True, "deps/own/a.c": False},
    ),
    "an earlier line loses": (
        {".gitattributes": f"deps/own/** -{V}\ndeps/** {V}\n"},
        {"deps/a.c": True, "deps/own/a.c": True},
    ),
    "the last line that matches wins, whatever literal its paths start or end with": (
        {".gitattributes": f"**/gen/** {V}\n*.c -{V}\ngen/keep/** {V}\n*.h {V}\n**/gen/*.h -{V}\n"},
        {
            "gen/a.py": True,
            "gen/a.c": False,
            "gen/keep/a.c": True,
            "gen/keep/b.h": True,
            "x/gen/b.h": False,
            "a.h": True,
        },
    ),
    "the last mention on a line wins": (
        {".gitattributes": f"*.c {V} -{V}\n*.h -{V} {V}\n"},
        {"a.c": False, "a.h": True},
    ),
    "a deeper file wins": (
        {".gitattributes": f"deps/** {V}\n", "deps/.gitattributes": f"own/** -{V}\n"},
        {"deps/a.c": True, "deps/own/a.c": False},
    ),
    "a deeper file applies only below it": (
        {"sub/.gitattributes": f"*.c {V}\n/top.h {V}\n"},
        {"sub/a.c": True, "sub/x/a.c": True, "a.c": False, "sub/top.h": True, "sub/x/top.h": False},
    ),
    "unset, unspecified and values": (
        {".gitattributes": f"* {V}\n-.c -{V}\nq.c !{V}\nf.c {V}=false\nt.c {V}=true\n"},
        {"a.py": True, "-.c": False, "q.c": False, "f.c": False, "t.c": True},
    ),
    "comments, blank lines, indentation and CRLF": (
        {".gitattributes": f"# deps/** {V}\n\n  \t\n\t  keep/** {V}\r\nall/**\t{V}\r\n"},
        {"deps/a.c": False, "keep/a.c": True, "all/b.c": True},
    ),
    "other attributes and names": (
        {".gitattributes": f"*.c text eol=lf {V}\n*.h linguist-generated\n*.py {V}-not\n"},
        {"a.c": True, "a.h": False, "a.py": False},
    ),
    "a negative pattern is ignored, an escaped one is literal": (
        {".gitattributes": f"!deps/** {V}\n\\!bang.c {V}\n"},
        {"deps/a.c": False, "!bang.c": True},
    ),
    "a line naming no valid attribute sets nothing, not even its valid ones": (
        {
            ".gitattributes": (
                f"*.c {V}\nlib/*.c -{V} # ours after all\n*.h {V} foo@bar\n*.py {V}\f\n"
                f"*.rb {V} =x\n*.go {V} -\n*.js {V} !\n*.rs {V} --x\n*.kt {V} é\n"
                f"*.md -text eol=lf x.y_Z-1 !merge diff=go! {V}\n"
            )
        },
        {
            "a.c": True,
            "lib/a.c": True,
            "a.h": False,
            "a.py": False,
            "a.rb": False,
            "a.go": False,
            "a.js": False,
            "a.rs": False,
            "a.kt": False,
            "a.md": True,
        },
    ),
    "a value after - or ! changes nothing: unset, unspecified": (
        {".gitattributes": f"* {V}\nu.c -{V}=true\nq.c !{V}=x\nt.c {V}=\n"},
        {"a.c": True, "u.c": False, "q.c": False, "t.c": True},
    ),
    "[attr] alone is a pattern, not a macro": (
        {".gitattributes": f"[attr] {V}\n"},
        {"a": True, "t": True, "x": False, "[attr]": False},
    ),
    "a range written backwards holds its first character only": (
        {".gitattributes": f"y[z-ab] {V}\nw[]-*] {V}\n"},
        {"yz": True, "yb": True, "yq": False, "ya": False, "w]": True, "w*": False},
    ),
    "**\\/ crosses folders but needs one": (
        {".gitattributes": f"a/**\\/b {V}\n"},
        {"a/x/b": True, "a/x/y/b": True, "a/b": False},
    ),
    # Backtracking regexes took minutes on this (git's wildmatch stops early): it must end.
    "stars with the same text between them": (
        {".gitattributes": f"{'*a' * 12}*b {V}\n"},
        {"a" * 40 + "/b": False, "a" * 40: False, "a" * 12 + "b": True, "x" + "ab" * 12: True},
    ),
}


NAMES = (V, G)


def marked(name: str, paths: list[str], sources: dict[str, bytes]) -> frozenset[str]:
    """Which of `paths` the `.gitattributes` files in `sources` set the attribute `name` on."""
    return marked_paths(paths, sources, (name,))[name]


def _sources(case: str, name: str) -> dict[str, str]:
    """The case's files asking about `name`: for `linguist-generated`, the two attributes'
    names swapped, so that each case also shows one attribute never sets the other."""
    files = CASES[case][0]
    if name == V:
        return files
    return {p: t.replace(V, "\0").replace(G, V).replace("\0", G) for p, t in files.items()}


def _expect(case: str) -> list[tuple[str, str, str, bool]]:
    return [(case, name, path, want) for name in NAMES for path, want in CASES[case][1].items()]


ROWS = [row for case in CASES for row in _expect(case)]


@pytest.mark.parametrize(("case", "name", "path", "want"), ROWS)
def test_marked_paths_follow_gits_pattern_rules(
    case: str, name: str, path: str, want: bool
) -> None:
    files = {p: text.encode() for p, text in _sources(case, name).items()}
    assert (path in marked(name, [path], files)) is want


def _check_attr(root: Path, path: str, name: str) -> bool:
    """Whether `git check-attr` says `name` is set on `path`, as linguist reads the value."""
    out = git(root, "check-attr", name, "--", path).rstrip("\n")
    return out.rpartition(": ")[2] not in ("unset", "unspecified", "false")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_git_check_attr_agrees(tmp_path: Path, case: str, name: str) -> None:
    # The same rules asked of git itself: the tests above are git's behaviour, not a guess.
    git(tmp_path, "init", "-q")
    for rel, text in _sources(case, name).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(text.encode())
    for path, want in CASES[case][1].items():
        assert _check_attr(tmp_path, path, name) is want, (path, name)


@pytest.mark.parametrize("name", NAMES)
def test_lines_are_measured_in_bytes_as_git_measures_them(tmp_path: Path, name: str) -> None:
    # git ignores a line of MAX_LINE bytes or more, counted without its LF or CR LF and, on
    # the first line, without the byte-order mark; `€` is one character but three bytes.
    def line(pattern: str, size: int, state: str = "") -> bytes:
        head, tail = f"{pattern} ", f"{state}{name}"
        return (head + " " * (size - len(head) - len(tail)) + tail).encode()

    euros = "€" * 700
    data = b"".join(
        [
            b"\xef\xbb\xbf" + line("*.c", MAX_LINE - 1) + b"\r\n",
            line("*.h", MAX_LINE) + b"\n",
            line("*.md", MAX_LINE - 1) + b"\n",
            f"*.txt {name}\n[t{euros}]*.txt -{name}\n[p{euros}]*.py {name}\n".encode(),
            line("*.rs", MAX_LINE - 1) + b"\r",  # no LF after it: the CR counts
        ]
    )
    expected = {"a.c": True, "a.h": False, "a.md": True, "t.txt": True, "p.py": False}
    expected["a.rs"] = False
    found = marked_paths(list(expected), {".gitattributes": data}, (name,))[name]
    assert {p: p in found for p in expected} == expected
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitattributes").write_bytes(data)
    assert {p: _check_attr(tmp_path, p, name) for p in expected} == expected


def test_one_pass_reads_both_attributes_each_on_its_own(tmp_path: Path) -> None:
    # A deeper file that mentions one attribute does not decide the other: git reads each
    # attribute's lines apart, so the shallower file still decides `linguist-generated`.
    sources = {
        ".gitattributes": (
            f"* {G}\nvendor/** {V} -{G}\nboth.c {V} {G}=true\ngen/** {G}=false\n"
            f"gen/again.c !{G}\nproto/*.c {G}\n"
        ),
        "sub/.gitattributes": f"*.c {V}\n",
    }
    paths = ["a.c", "vendor/b.c", "both.c", "gen/c.c", "gen/again.c", "sub/d.c", "proto/e.c"]
    found = marked_paths(paths, {p: t.encode() for p, t in sources.items()})
    assert found == {
        V: {"vendor/b.c", "both.c", "sub/d.c"},
        G: {"a.c", "both.c", "sub/d.c", "proto/e.c"},
    }
    git(tmp_path, "init", "-q")
    for rel, text in sources.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    for name in (V, G):
        assert {p for p in paths if _check_attr(tmp_path, p, name)} == found[name], name


def test_no_rule_means_no_work() -> None:
    assert marked(V, ["a.c"], {".gitattributes": b"*.c text\n# linguist-vendored\n"}) == (
        frozenset()
    )
    assert marked_paths(["a.c"], {".gitattributes": b"*.c text\n"}) == {
        V: frozenset(),
        G: frozenset(),
    }
    # Macros are not expanded.
    assert parse(b"[attr]third linguist-vendored\n[attr]gen linguist-generated\n") == ()


@pytest.mark.parametrize(
    "data",
    [
        b"*.c linguist-vendored\n\0binary",  # a NUL byte: not a text file
        b"*.c linguist-vendored\n" + b"#" * MAX_BYTES,  # too large to be a real one
    ],
)
def test_binary_or_huge_files_are_ignored(data: bytes) -> None:
    assert marked(V, ["a.c"], {".gitattributes": data}) == frozenset()


def test_odd_bytes_and_malformed_patterns_do_not_crash() -> None:
    data = (
        b"\xef\xbb\xbf*.c linguist-vendored\n"  # a byte-order mark, skipped as git does
        b"d/[abc linguist-vendored\n"  # no closing bracket: matches nothing
        b"d/[[:nope:]] linguist-vendored\n"
        b"trailing\\ linguist-vendored\n"
        b"\xff\xfe.h linguist-vendored\n"  # not UTF-8: kept as the listing keeps such names
        + b"x" * 3000
        + b".py linguist-vendored\n"  # longer than git reads
    )
    names = ["a.c", "d/a", "\udcff\udcfe.h", "x" * 3000 + ".py"]
    assert marked(V, names, {".gitattributes": data}) == {"a.c", "\udcff\udcfe.h"}


@pytest.mark.parametrize(
    ("glob", "path", "want"),
    [
        ("a*", "abc", True),
        ("a*", "a/b", False),
        ("**", "a/b/c", True),
        ("a/**", "a/b/c", True),
        ("[]]x", "]x", True),
        ("[!]]x", "ax", True),
        ("\\*x", "*x", True),
        ("\\*x", "ax", False),
    ],
)
def test_glob_regex(glob: str, path: str, want: bool) -> None:
    regex = glob_regex(glob)
    assert regex is not None and (re.fullmatch(regex, path, re.DOTALL) is not None) is want
