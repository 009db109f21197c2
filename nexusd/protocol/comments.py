"""HTML comments in markdown (`<!-- … -->`): a template's guidance, not the text.

One reader for every markdown a person or an agent writes: a request's body, its goal, the
memory files. It looks for each comment's close once, from its opener: a regex looking for
`-->` from every `<!--` took 31–34 s on 200 KB of unclosed openers (a paste cut short, or
one made to stall the daemon). An unclosed comment is text, as a regex leaves it.
"""

from __future__ import annotations

OPEN = "<!--"
CLOSE = "-->"


def without_comments(text: str, *, keep_lines: bool = False) -> str:
    """`text` without its closed comments; with `keep_lines`, each is blanked to the line
    breaks it held, so every line stays where it was."""
    if OPEN not in text:
        return text
    parts: list[str] = []
    pos = 0
    while (start := text.find(OPEN, pos)) >= 0:
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            break  # no opener after this one has a close either
        parts.append(text[pos:start])
        if keep_lines:
            parts.append("\n" * text.count("\n", start, end))
        pos = end + len(CLOSE)
    parts.append(text[pos:])
    return "".join(parts)
