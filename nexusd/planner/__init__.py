"""The planning pipeline: librarian (context), architect (plan), critic (checks)."""

from __future__ import annotations
