"""One entry point from a file's bytes to its units: the right parser for each language.

Python goes through `ast`; the languages with a grammar wheel through tree-sitter; any
other text through line windows. Binary, minified and undecodable content is recorded
with its reason and no units, so `nexusd code status` can say why a file is not searched.
"""

from __future__ import annotations

import re
from dataclasses import replace

from nexusd.code.lines import line_windows
from nexusd.code.messages import messages
from nexusd.code.selection import looks_binary, looks_generated, looks_minified
from nexusd.code.units import CodeUnit, FileStatus, ParsedFile, module_name

PYTHON = frozenset({".py", ".pyi", ".pyw"})
# Prose and configuration: searched by words, language `text`, ranked below code.
TEXT = frozenset(
    {
        ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".html",
        ".css", ".scss", ".cmake", ".gradle", ".mk", ".in", ".tex", ".adoc",
    }
)  # fmt: skip
TEXT_NAMES = frozenset({"Makefile", "Dockerfile", "CMakeLists.txt", "Rakefile", "Gemfile"})
# Code without a grammar wheel here: line windows, but ranked as code (language = extension).
OTHER_CODE = frozenset(
    {
        ".sh", ".bash", ".cs", ".kt", ".scala", ".swift", ".lua", ".pl", ".r",
        ".sql", ".vue", ".svelte", ".m", ".mm", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj",
        ".dart", ".zig", ".nim", ".jl", ".proto", ".graphql", ".tf",
        # Less common, but where a fix can be (jq's own builtins are `src/builtin.jq`): an
        # extension missing here is not indexed at all.
        ".jq", ".pyx", ".pxd", ".pxi", ".zsh", ".fish", ".ps1", ".bat", ".cmd", ".awk",
        ".pm", ".mli", ".fs", ".fsx", ".groovy", ".kts", ".vim", ".el",
        ".lisp", ".scm", ".rkt", ".cljs", ".cljc", ".hrl", ".f90", ".f", ".d", ".cr",
        ".coffee", ".elm", ".tcl", ".bzl", ".nix", ".thrift", ".glsl", ".hlsl", ".wgsl",
        ".cu", ".cuh", ".v", ".sv", ".vhd", ".asm", ".s",
    }
)  # fmt: skip


# What only C++ writes at a line's start: a `.h` saying it is C++'s (C headers guard their
# `extern "C"` behind `#ifdef __cplusplus`, which this does not match).
_CPP = re.compile(
    r"^[ \t]*(?:namespace\s+[\w:]*\s*\{|template\s*<|(?:public|private|protected)\s*:"
    r"|using\s+namespace\b|class\s+\w+(?:\s*:\s*[\w:<>, ]+)?\s*\{)",
    re.MULTILINE,
)


def suffix(path: str) -> str:
    """The lower-case extension of a path (`.py`), or "" for none."""
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""


def language_for(path: str) -> str | None:
    """The language a path is parsed as; None when it is not indexed at all."""
    ext = suffix(path)
    if ext in PYTHON:
        return "python"
    from nexusd.code.lang_treesitter import EXTENSIONS

    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if ext in TEXT or path.rsplit("/", 1)[-1] in TEXT_NAMES:
        return "text"
    if ext in OTHER_CODE:
        return ext[1:]
    return None


def empty(path: str, language: str, status: FileStatus, note: str) -> ParsedFile:
    """A file recorded without units (binary, too large, unreadable)."""
    name = path.rsplit("/", 1)[-1]
    unit = CodeUnit(path, "file", name, module_name(path), 1, 1)
    return ParsedFile(path, language, (unit,), status=status, note=note)


def decode(data: bytes) -> tuple[str, str]:
    """(text, note): UTF-8 when it is, else Latin-1 so every byte still reads (and a note)."""
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        note = f"not UTF-8 at byte {exc.start}; read as Latin-1"
        return data.decode("latin-1"), note


def parse_file(path: str, data: bytes, language: str) -> ParsedFile:
    """The units of one file's content as `language` (see `language_for`)."""
    if looks_binary(data):
        return empty(path, language, "binary", "a NUL byte in its first 8 KiB")
    text, note = decode(data)
    if looks_minified(text):
        return empty(path, language, "fallback", "minified or generated (very long lines)")
    if language == "c" and suffix(path) == ".h" and _CPP.search(text):
        language = "cpp"  # fmt's `include/fmt/*.h`: a C++ header read as C is all errors
    if language == "python":
        parsed = _python(path, text)
    elif language == "text":
        parsed = line_windows(path, text)
    else:
        from nexusd.code.lang_treesitter import parse_treesitter

        found = parse_treesitter(path, text, language)
        parsed = (
            found
            if found is not None
            else line_windows(
                path, text, language, note=f"no {language} grammar installed; indexed as lines"
            )
        )
    parsed = _with_messages(parsed)
    if note and not parsed.note:
        parsed = replace(parsed, note=note)
    if looks_generated(text):
        parsed = replace(parsed, generated=True)
    return parsed


def _with_messages(parsed: ParsedFile) -> ParsedFile:
    """`parsed` with each unit's raised and logged messages, read from its own text."""
    if parsed.language == "text":
        return parsed
    units = list(parsed.units)
    changed = False
    for i, unit in enumerate(units):
        found = messages(unit.text)
        if found:
            units[i] = replace(unit, messages=found)
            changed = True
    return replace(parsed, units=tuple(units)) if changed else parsed


def _python(path: str, text: str) -> ParsedFile:
    from nexusd.code.lang_python import parse_python

    return parse_python(path, text)
