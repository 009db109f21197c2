"""The fallback for text no parser understands: the file as a unit plus windows of lines.

A window is still searchable by its words and cited as `path:line`, so a language without
a grammar (or a file that does not parse) is found, just without symbol names.
"""

from __future__ import annotations

from nexusd.code.units import CodeUnit, FileStatus, ParsedFile, module_name, text_lines

WINDOW_LINES = 60


def own_text(
    lines: list[str], start: int, end: int, holes: list[tuple[int, int]], *, base: int = 1
) -> str:
    """Lines start..end (inclusive, counted from `base`) without the nested units' lines
    (`holes`, counted the same way): a unit's own text, so nothing counts twice."""
    end = min(end, len(lines) - 1 + base)
    keep = [True] * (end - start + 1)
    for a, b in holes:
        for row in range(max(a, start), min(b, end) + 1):
            keep[row - start] = False
    return "\n".join(lines[r - base] for r in range(start, end + 1) if keep[r - start])


def line_windows(
    path: str,
    text: str,
    language: str = "text",
    *,
    status: FileStatus = "fallback",
    note: str = "",
    size: int = WINDOW_LINES,
) -> ParsedFile:
    """The file unit (no own text) and one `window` unit per `size` lines."""
    lines = text_lines(text)
    total = max(len(lines), 1)
    file_unit = CodeUnit(path, "file", path.rsplit("/", 1)[-1], module_name(path), 1, total)
    windows = []
    for first in range(0, total, size):
        last = min(first + size, total)
        chunk = "\n".join(lines[first:last])
        if chunk.strip():
            name = f"lines {first + 1}-{last}"
            windows.append(CodeUnit(path, "window", name, name, first + 1, last, text=chunk))
    return ParsedFile(path, language, (file_unit, *windows), status=status, note=note)
