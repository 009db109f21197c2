"""Markdown and YAML templates that `nexusd init` writes (package data), and their loader."""

from __future__ import annotations

from importlib import resources

# Template name -> package data file.
TEMPLATES: dict[str, str] = {
    "config": "config.yaml",
    "scratchpad_readme": "scratchpad_README.md",
    "request": "request.md",
    "memory": "MEMORY.md",
    "daily_note": "daily_note.md",
}


def template_text(name: str) -> str:
    """The text of a packaged template by name (see TEMPLATES); KeyError for unknown names."""
    filename = TEMPLATES[name]
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")


def daily_note(date: str) -> str:
    """A new daily note for `date` (YYYY-MM-DD)."""
    return template_text("daily_note").replace("{date}", date)
