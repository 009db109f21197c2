"""Markdown and YAML templates that `nexusd init` writes (package data)."""

from __future__ import annotations
