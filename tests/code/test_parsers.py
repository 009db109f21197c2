"""Which language a path is read as, and what a file's content gives."""

from __future__ import annotations

import pytest

from nexusd.code.parsers import language_for, parse_file


@pytest.mark.parametrize(
    ("path", "want"),
    [
        ("pkg/mod.py", "python"),
        ("src/index.js", "javascript"),
        ("include/fmt/format.h", "c"),
        # C++ implementation parts included into headers.
        ("include/boost/detail/impl.ipp", "cpp"),
        ("include/lib/inline.inl", "cpp"),
        # Code without a grammar here, read as lines and ranked as code.
        ("src/builtin.jq", "jq"),
        ("sklearn/tree/_tree.pyx", "pyx"),
        ("scripts/release.zsh", "zsh"),
        ("docs/index.rst", "text"),
        ("Makefile", "text"),
        # Data is not indexed.
        ("tests/data/sample.csv", None),
        ("assets/logo.svg", None),
    ],
)
def test_each_path_is_read_as_its_language(path: str, want: str | None) -> None:
    assert language_for(path) == want


def test_a_file_without_a_grammar_is_searchable_by_its_lines() -> None:
    source = 'def walk(f): . as $in | if type == "object" then map_values(walk(f)) else . end;\n'
    parsed = parse_file("src/builtin.jq", source.encode(), "jq")
    assert parsed.language == "jq"
    assert any("map_values" in unit.text for unit in parsed.units)


@pytest.mark.parametrize(
    ("source", "language"),
    [
        ("namespace fmt {\ntemplate <typename T> struct formatter {};\n}\n", "cpp"),
        ("class Options {\n public:\n  int n;\n};\n", "cpp"),
        # A C header that guards its C++ linkage is still C.
        ('#ifdef __cplusplus\nextern "C" {\n#endif\nint jv_parse(const char *s);\n', "c"),
    ],
)
def test_a_header_is_read_as_the_language_it_is_written_in(source: str, language: str) -> None:
    parsed = parse_file("include/lib/core.h", source.encode(), "c")
    assert parsed.language == language
